//! `collective-synthetic`: the slides' synthetic experiments ("Experimental results -
//! synthetic datasets"; Sen, Namata, Bilgic, Getoor, Gallagher & Eliassi-Rad 2008, AI
//! Magazine 29(3), the synthetic-data figures): CO, ICA and GS (each with naive Bayes and
//! logistic regression), LBP and MF on graphs of `|V| = 1000` nodes and `|L| = 5` labels,
//! (a) sweeping homophily from 0.1 to 0.9 at a fixed link density and (b) sweeping link
//! density (average degree) at a fixed homophily; 10-fold random sampling, accuracy ±
//! standard error over the folds.
//!
//! Graphs come from srl-graph's homophily / link-density generator ([`HomophilyParams`]):
//! uniform classes, `round(n · d / 2)` edge draws of which a share `homophily` join two
//! nodes of the same class, and binary attributes (`feature_on` on the node's own class's
//! columns, `feature_off` elsewhere). Sen et al. generate their graphs with a different
//! process (a preferential-attachment style generator whose link density is the chance of
//! adding a link rather than a node); our link-density axis is the average degree `d`.
//! Every method, the LR inner-CV tuning and the pseudo-likelihood MN are exactly those of
//! `collective-classification` (see that module), run through srl-learn's pipeline ([`evaluate`]).
//!
//! Besides accuracy, the `seconds` rows carry `converged_folds` and `iterations_per_fold`:
//! the plots `iterations_homophily.svg` and `iterations_link_density.svg` show how many
//! test-time LBP / MF iterations each point needs; the notes list any fold that did not
//! converge.

use anyhow::Context as _;
use srl_eval::{ResultRow, Summary};
use srl_graph::{HomophilyParams, KFold};
use srl_learn::collective::{CollectiveMethod, CollectiveSettings, ProtocolResult, evaluate};

use crate::context::{Context, Report};
use crate::experiments::Experiment;
use crate::plot::{Series, line_plot};

/// The experiment's registry entry.
pub fn experiment() -> Experiment {
    Experiment {
        name: "collective-synthetic",
        about: "Sen et al. 2008 synthetic sweeps: CO/ICA/GS (NB, LR), LBP, MF vs homophily and link density (|V|=1000, |L|=5)",
        run,
    }
}

/// Link density (average degree) of the homophily sweep.
const FIXED_DEGREE: f64 = 4.0;
/// Homophily of the link-density sweep.
const FIXED_HOMOPHILY: f64 = 0.7;

/// One point of a sweep.
#[derive(Clone, Debug)]
struct Point {
    sweep: &'static str,
    homophily: f64,
    avg_degree: f64,
}

impl Point {
    fn x(&self) -> f64 {
        if self.sweep == "homophily" {
            self.homophily
        } else {
            self.avg_degree
        }
    }
}

fn params(p: &Point) -> HomophilyParams {
    HomophilyParams {
        num_nodes: 1000,
        num_labels: 5,
        avg_degree: p.avg_degree,
        homophily: p.homophily,
        num_features: 20,
        feature_on: 0.3,
        feature_off: 0.05,
        ..HomophilyParams::default()
    }
}

fn run(ctx: &Context) -> anyhow::Result<Report> {
    let mut table = ctx.table();
    let methods = CollectiveMethod::PAPER;
    let mut setup = CollectiveSettings::default();
    let (homophilies, degrees, k): (Vec<f64>, Vec<f64>, usize) = if ctx.quick {
        setup.gs.burn_in = 50;
        setup.gs.samples = 200;
        (vec![0.2, 0.8], vec![2.0, 8.0], 3)
    } else {
        (
            (1..=9).map(|i| f64::from(i) / 10.0).collect(),
            vec![1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 10.0],
            10,
        )
    };
    let mut points: Vec<Point> = homophilies
        .iter()
        .map(|&h| Point {
            sweep: "homophily",
            homophily: h,
            avg_degree: FIXED_DEGREE,
        })
        .collect();
    points.extend(degrees.iter().map(|&d| Point {
        sweep: "link_density",
        homophily: FIXED_HOMOPHILY,
        avg_degree: d,
    }));
    table.notes.push(format!(
        "graphs: HomophilyParams, |V| = 1000, |L| = 5 (uniform), 20 binary attributes \
         (P = 0.3 on the 4 columns of the node's class, 0.05 elsewhere); homophily sweep at \
         average degree {FIXED_DEGREE}, link-density (average degree) sweep at homophily \
         {FIXED_HOMOPHILY}; one graph per point (seeded); {k}-fold random sampling; accuracy \
         = mean over the folds, stderr = standard error over the folds. Methods, LR tuning \
         and MN training as in collective-classification (LR c grid {:?}, {}-fold inner \
         CV; MN by pseudo-likelihood; LBP/MF tolerance {} with a {}-iteration cap; GS {} + \
         {} sweeps).",
        setup.lr_grid,
        setup.inner_folds,
        setup.lbp.tol,
        setup.lbp.max_iters,
        setup.gs.burn_in,
        setup.gs.samples,
    ));
    let mut results: Vec<(Point, ProtocolResult)> = Vec::new();
    for (pi, point) in points.iter().enumerate() {
        let mut rng = ctx.rng(500 + pi as u64);
        let graph = params(point)
            .generate(&mut rng)
            .with_context(|| format!("generating {point:?}"))?;
        let tests: Vec<Vec<usize>> = KFold::random(graph.num_nodes(), k, &mut rng)?
            .splits()
            .map(|s| s.test_nodes().iter().map(|v| v.index()).collect())
            .collect();
        let res = evaluate(
            &setup,
            &methods,
            &graph,
            tests,
            ctx.seed,
            10_000 + pi as u64,
        )
        .with_context(|| format!("{point:?}"))?;
        ctx.log(&format!(
            "{} = {}: {} edges, measured homophily {:.3}",
            point.sweep,
            point.x(),
            graph.num_edges(),
            graph.homophily().unwrap_or(0.0)
        ));
        let dataset = format!("synthetic-{}", point.sweep);
        for (mi, method) in methods.iter().enumerate() {
            let s = Summary::of(&res.accuracy[mi])?;
            let mut row = ResultRow::new(&dataset, method.name(), "accuracy", s.mean)
                .with("protocol", "RS")
                .with("homophily", point.homophily)
                .with("avg_degree", point.avg_degree)
                .with("measured_homophily", graph.homophily().unwrap_or(0.0))
                .with("edges", graph.num_edges())
                .with("folds", k);
            if let Some(se) = s.std_error {
                row = row.with("stderr", se);
            }
            table.push(row);
            let it = &res.iterations[mi];
            table.push(
                ResultRow::new(
                    &dataset,
                    method.name(),
                    "seconds",
                    res.seconds[mi].iter().sum(),
                )
                .with("protocol", "RS")
                .with("homophily", point.homophily)
                .with("avg_degree", point.avg_degree)
                .with("folds", k)
                .with("iterations_per_fold", it.clone())
                .with(
                    "converged_folds",
                    res.converged[mi].iter().filter(|&&c| c).count(),
                ),
            );
        }
        results.push((point.clone(), res));
    }
    // Where LBP / MF did not converge.
    let mut failures = Vec::new();
    for (point, res) in &results {
        for (mi, method) in methods.iter().enumerate() {
            if matches!(method, CollectiveMethod::Lbp | CollectiveMethod::Mf) {
                let bad = res.converged[mi].iter().filter(|&&c| !c).count();
                if bad > 0 {
                    failures.push(format!(
                        "{} {} = {}: {bad}/{k} folds",
                        method.name(),
                        point.sweep,
                        point.x()
                    ));
                }
            }
        }
    }
    table.notes.push(if failures.is_empty() {
        "LBP and MF converged on every fold of every point".into()
    } else {
        format!(
            "LBP / MF did not converge within the cap: {}",
            failures.join("; ")
        )
    });
    let mut plots = Vec::new();
    for (sweep, x_label, file) in [
        ("homophily", "homophily", "homophily.svg"),
        (
            "link_density",
            "average degree (link density)",
            "link_density.svg",
        ),
    ] {
        let series: Vec<Series> = methods
            .iter()
            .enumerate()
            .map(|(mi, method)| {
                let mut s = Series {
                    label: method.name().into(),
                    points: Vec::new(),
                    errors: Vec::new(),
                };
                for (point, res) in results.iter().filter(|(p, _)| p.sweep == sweep) {
                    if let Ok(sum) = Summary::of(&res.accuracy[mi]) {
                        s.points.push((point.x(), sum.mean));
                        s.errors.push(sum.std_error.unwrap_or(0.0));
                    }
                }
                s
            })
            .collect();
        let title = if sweep == "homophily" {
            format!("accuracy vs homophily (|V| = 1000, |L| = 5, degree {FIXED_DEGREE})")
        } else {
            format!("accuracy vs link density (|V| = 1000, |L| = 5, homophily {FIXED_HOMOPHILY})")
        };
        plots.push((
            file.to_string(),
            line_plot(&title, x_label, "accuracy", &series)?,
        ));
    }
    // Test-time inference effort: mean LBP / MF iterations over the folds, one plot per
    // sweep (a share-of-converged-folds plot was flat at 1.0: every fold converges; the
    // notes list any that did not).
    for (sweep, x_label, file) in [
        ("homophily", "homophily", "iterations_homophily.svg"),
        (
            "link_density",
            "average degree (link density)",
            "iterations_link_density.svg",
        ),
    ] {
        let series: Vec<Series> = methods
            .iter()
            .enumerate()
            .filter(|(_, m)| matches!(m, CollectiveMethod::Lbp | CollectiveMethod::Mf))
            .map(|(mi, method)| Series {
                label: method.name().into(),
                points: results
                    .iter()
                    .filter(|(p, _)| p.sweep == sweep)
                    .map(|(p, r)| {
                        let it = &r.iterations[mi];
                        (
                            p.x(),
                            it.iter().sum::<usize>() as f64 / it.len().max(1) as f64,
                        )
                    })
                    .collect(),
                errors: Vec::new(),
            })
            .collect();
        plots.push((
            file.into(),
            line_plot(
                &format!("test-time LBP / MF iterations to convergence vs {x_label}"),
                x_label,
                "mean iterations over the folds",
                &series,
            )?,
        ));
    }
    if ctx.quick {
        table.notes.push(format!(
            "quick run: {} homophily and {} link-density points, {k} folds, GS {} + {} sweeps",
            homophilies.len(),
            degrees.len(),
            setup.gs.burn_in,
            setup.gs.samples
        ));
    }
    Ok(Report { table, plots })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng as _;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn generator_points_have_the_requested_shape() {
        let p = Point {
            sweep: "homophily",
            homophily: 0.9,
            avg_degree: 4.0,
        };
        let g = params(&p)
            .generate(&mut ChaCha8Rng::seed_from_u64(1))
            .expect("valid");
        assert_eq!(g.num_nodes(), 1000);
        assert_eq!(g.num_labels(), 5);
        let h = g.homophily().expect("labelled edges");
        assert!((h - 0.9).abs() < 0.03, "{h}");
        let d = 2.0 * g.num_edges() as f64 / 1000.0;
        assert!((d - 4.0).abs() < 0.2, "{d}");
        assert_eq!(p.x(), 0.9);
    }
}
