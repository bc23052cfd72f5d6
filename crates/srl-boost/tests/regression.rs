//! RDN-Boost regression (issue 27) against BoostSRL's `-reg` on a hand-made world.
//!
//! The world (tests/fixtures/regression, made by a seeded script: 30 training and 12
//! test people; salary = 40 + 25·senior + 12·phd + 5·advises-someone) and BoostSRL's
//! numbers, from the jar inside srlearn 0.5.5's wheel on OpenJDK 17:
//!
//! ```sh
//! java -jar BoostSRL.jar -reg -l -train train/ -target salary -trees 3
//! java -jar BoostSRL.jar -reg -i -model train/models/ -test test/ -target salary -trees 3
//! # test/results_salary.db (prediction, truth per example); MeanSquaredError = 1.3436521891920057
//! ```

use std::path::Path;

use srl_boost::{RegressionRfgbParams, load_regression_split, read_background};

const BOOSTSRL_3_TREES: [f64; 12] = [
    39.4,
    54.78061224489796,
    65.9,
    83.57142857142857,
    65.9,
    82.375,
    65.9,
    39.4,
    52.369897959183675,
    39.4,
    81.875,
    54.78061224489796,
];
const BOOSTSRL_MSE: f64 = 1.3436521891920057;

fn fixture() -> &'static Path {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/regression"
    ))
}

#[test]
fn regression_learns_the_salary_world_as_boostsrl_does() {
    let bk = read_background(&fixture().join("train/train_bk.txt")).unwrap();
    let train = load_regression_split(&fixture().join("train"), "train", "salary", &bk).unwrap();
    let test = load_regression_split(&fixture().join("test"), "test", "salary", &bk).unwrap();
    assert_eq!((train.examples.len(), test.examples.len()), (30, 12));
    let params = RegressionRfgbParams {
        n_trees: 3,
        ..RegressionRfgbParams::default()
    };
    let model = params
        .fit(&train.db, &bk, &train.examples, &train.values)
        .unwrap();
    // the first tree fits the values themselves (F0 = 0, as BoostSRL's first tree)
    assert_eq!(model.initial_value(), 0.0);
    let mse = model.train_mse();
    assert_eq!(mse.len(), 4);
    assert!(mse.windows(2).all(|w| w[1] <= w[0] + 1e-12), "{mse:?}");
    let pred = model.predict(&test.db, &test.examples).unwrap();
    let test_mse: f64 = pred
        .iter()
        .zip(&test.values)
        .map(|(p, y)| (p - y) * (p - y))
        .sum::<f64>()
        / 12.0;
    // srl: test MSE 2.6644 (R² 0.989); BoostSRL 1.3437 (R² 0.995). Same model family,
    // different trees: srl's first tree is senior / phd / advises as generated, but its 8
    // leaves cannot also split the non-senior PhDs by `advises` (52.71 for 52 and 57);
    // BoostSRL's first tree spends a leaf on `senior(A), advises(A, U), advises(U, _)`
    // and corrects later (docs/srl-boost.md, "Regression").
    let mean = test.values.iter().sum::<f64>() / 12.0;
    let var = test
        .values
        .iter()
        .map(|y| (y - mean) * (y - mean))
        .sum::<f64>()
        / 12.0;
    let boostsrl_mse = BOOSTSRL_3_TREES
        .iter()
        .zip(&test.values)
        .map(|(p, y)| (p - y) * (p - y))
        .sum::<f64>()
        / 12.0;
    assert!(
        (boostsrl_mse - BOOSTSRL_MSE).abs() < 1e-9,
        "fixture and reference agree"
    );
    assert!((test_mse - 2.664399092970522).abs() < 1e-9, "{test_mse}");
    assert!(1.0 - test_mse / var > 0.985 && 1.0 - BOOSTSRL_MSE / var > 0.99);
    // deterministic: no sampling in regression
    let again = params
        .fit(&train.db, &bk, &train.examples, &train.values)
        .unwrap();
    assert_eq!(again, model);
    // the model file form round-trips and is checked on load
    let json = serde_json::to_string(&model).unwrap();
    let back: srl_boost::RegressionRfgb = serde_json::from_str(&json).unwrap();
    assert_eq!(back, model);
    let bad = json.replace("\"step\":1.0", "\"step\":-1.0");
    assert!(serde_json::from_str::<srl_boost::RegressionRfgb>(&bad).is_err());
}

#[test]
fn bad_regression_files_are_errors_with_file_and_line() {
    use srl_boost::{BoostError, build_regression_split, parse_atoms, parse_background};
    let bk = parse_background("mode: f(+t).\nmode: y(+t).", Path::new("bk.txt")).unwrap();
    let facts = parse_atoms("f(a).\n", Path::new("facts.txt")).unwrap();
    let run = |pos: &str| {
        let pos = parse_atoms(pos, Path::new("pos.txt")).unwrap();
        build_regression_split(&facts, &pos, "y", &bk, Path::new("facts.txt"))
    };
    let line_of = |r: Result<_, BoostError>| match r {
        Err(BoostError::Parse {
            file,
            line,
            message,
        }) => (file, line, message),
        Err(e) => panic!("expected a parse error, got {e}"),
        Ok(_) => panic!("expected a parse error"),
    };
    let (file, line, m) = line_of(run(
        "regressionExample(y(a),1).\nregressionExample(y(b),nan).",
    ));
    assert_eq!((file.as_path(), line), (Path::new("pos.txt"), 2));
    assert!(m.contains("finite"), "{m}");
    let (_, line, m) = line_of(run("y(a)."));
    assert_eq!(line, 1);
    assert!(m.contains("regressionExample"), "{m}");
    let (_, line, m) = line_of(run(
        "regressionExample(y(a),1).\nregressionExample(y(a),2).",
    ));
    assert_eq!(line, 2);
    assert!(m.contains("pos.txt:1"), "{m}");
    let (_, _, m) = line_of(run("regressionExample(y,1)."));
    assert!(m.contains("atom with arguments"), "{m}");
    // the same example twice with the same value is one example
    let ok = run("regressionExample(y(a),1).\nregressionExample(y(a),1.0).").unwrap();
    assert_eq!((ok.examples.len(), ok.values.as_slice()), (1, &[1.0][..]));
    // no modes, NaN values and bad parameters are errors, not panics
    let p = srl_boost::RegressionRfgbParams::default();
    let empty = srl_boost::Background::default();
    assert!(matches!(
        p.fit(&ok.db, &empty, &ok.examples, &ok.values),
        Err(BoostError::NoModes)
    ));
    assert!(p.fit(&ok.db, &bk, &ok.examples, &[f64::NAN]).is_err());
    assert!(p.fit(&ok.db, &bk, &ok.examples, &[1.0, 2.0]).is_err());
    let zero = srl_boost::RegressionRfgbParams {
        n_trees: 0,
        ..Default::default()
    };
    assert!(zero.fit(&ok.db, &bk, &ok.examples, &ok.values).is_err());
}
