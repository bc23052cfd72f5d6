//! Small adapters to the library's parameter types.

use anyhow::Context as _;
use srl_boost::NegativeSampling;

/// `--neg-ratio r` applied to the preset's sampling: 0 keeps every negative (`All`);
/// otherwise the preset's own scheme (whatever variant it is: drawn once, or afresh for
/// each tree) with its ratio replaced by `r`.
///
/// Works through the serde form (`"All"` or `{"Variant": ratio}`), so it does not name
/// the variants that carry a ratio.
///
/// # Errors
/// If the preset's form is not a one-ratio variant or `All` (cannot happen with the
/// library's current enum).
pub fn neg_sampling(preset: NegativeSampling, r: f64) -> anyhow::Result<NegativeSampling> {
    let value = if r == 0.0 {
        serde_json::json!("All")
    } else {
        match serde_json::to_value(preset)? {
            serde_json::Value::Object(m) if m.len() == 1 => {
                let (k, _) = m.into_iter().next().context("one-entry object")?;
                serde_json::json!({ k: r })
            }
            // `All` in the preset: sample with the ratio once per tree when the library
            // has that variant, else once.
            _ => {
                return serde_json::from_value(serde_json::json!({"PerTree": r}))
                    .or_else(|_| serde_json::from_value(serde_json::json!({"Ratio": r})))
                    .context("no ratio variant in NegativeSampling");
            }
        }
    };
    serde_json::from_value(value).context("building the negative sampling")
}
