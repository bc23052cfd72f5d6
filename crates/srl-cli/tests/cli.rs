//! End-to-end tests of the `srl` binary on the small fixtures in `tests/fixtures/`:
//! every subcommand, and bad input (a missing file, a malformed line, a model file of
//! another version) giving one clear message, a non-zero exit and no output file.
//! Two tests compare the binary with the library on real data (IMDB `workedUnder` fold 1)
//! and on a UAI grid; the IMDB one is skipped, with a message naming the path, when
//! `SRL_DATA_DIR` does not hold it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use rand::SeedableRng as _;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn fx(p: &str) -> String {
    fixtures().join(p).display().to_string()
}

fn srl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_srl"))
        .args(args)
        .env_remove("SRL_DATA_DIR")
        .output()
        .expect("the srl binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[track_caller]
fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "srl failed: {}\n{}",
        stderr(o),
        stdout(o)
    );
    stdout(o)
}

/// A failure: exit status 1, one `srl: error:` line on stderr containing every `needles`,
/// no panic or backtrace.
#[track_caller]
fn fails(o: &Output, needles: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(1), "expected exit 1: {err}");
    let errors: Vec<&str> = err.lines().filter(|l| l.contains("error")).collect();
    assert_eq!(errors.len(), 1, "one error line: {err}");
    assert!(errors[0].starts_with("srl: error:"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    for n in needles {
        assert!(err.contains(n), "{n:?} not in {err:?}");
    }
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_str(&stdout(o)).expect("--json prints one JSON object")
}

fn dir_entries(d: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(d)
        .expect("read_dir")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn boost_learn_predict_show() {
    let t = tempfile::tempdir().expect("tempdir");
    let model = t.path().join("m.json");
    let m = model.display().to_string();
    ok(&srl(&[
        "boost",
        "learn",
        "--train",
        &fx("boost/train"),
        "--target",
        "cancer",
        "--trees",
        "3",
        "--model",
        &m,
        "--quiet",
    ]));
    let out = t.path().join("p.tsv");
    let p = out.display().to_string();
    let o = srl(&[
        "boost",
        "predict",
        "--model",
        &m,
        "--test",
        &fx("boost/test"),
        "--out",
        &p,
        "--json",
    ]);
    ok(&o);
    let j = json(&o);
    assert_eq!(j["examples"], 30);
    let auc = j["auc_roc"].as_f64().expect("auc");
    assert!(auc > 0.7 && auc <= 1.0, "{auc}");
    for k in ["auc_pr", "cll", "fnr", "f_beta"] {
        assert!(j[k].as_f64().is_some_and(f64::is_finite), "{k}: {j}");
    }
    let tsv = std::fs::read_to_string(&out).expect("tsv");
    assert!(tsv.starts_with("atom\tlabel\tprobability\n"));
    assert_eq!(tsv.lines().count(), 31);
    assert!(tsv.lines().nth(1).is_some_and(|l| l.starts_with("cancer(")));
    let s = ok(&srl(&["boost", "show", "--model", &m]));
    assert!(s.contains("% Tree 1") && s.contains("cancer(A) :-"), "{s}");
    // The text summary names the metrics.
    let text = ok(&srl(&[
        "boost",
        "predict",
        "--model",
        &m,
        "--test",
        &fx("boost/test"),
    ]));
    assert!(text.contains("AUC-ROC") && text.contains("CLL") && text.contains("FNR"));
}

/// `--model-type mln`: MLN-Boost (Khot et al. 2011) through learn, predict and show; the
/// model file is of kind `mln-boost`, `show` prints weighted clauses in MLN syntax, and
/// the soft margin is refused for it.
#[test]
fn boost_mln_learn_predict_show() {
    let t = tempfile::tempdir().expect("tempdir");
    let m = t.path().join("mln.json").display().to_string();
    let learn = |extra: &[&str]| {
        let mut args = vec![
            "boost",
            "learn",
            "--train",
            "",
            "--target",
            "cancer",
            "--trees",
            "3",
            "--model-type",
            "mln",
            "--model",
            &m,
            "--json",
            "--quiet",
        ];
        let train = fx("boost/train");
        args[3] = &train;
        args.extend_from_slice(extra);
        srl(&args)
    };
    let j = json(&learn(&[]));
    assert_eq!(j["model_type"], "mln-boost", "{j}");
    assert_eq!(j["trees"], 3);
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&m).expect("model")).expect("json");
    assert_eq!(file["kind"], "mln-boost");
    let o = srl(&[
        "boost",
        "predict",
        "--model",
        &m,
        "--test",
        &fx("boost/test"),
        "--json",
    ]);
    let p = json(&o);
    assert_eq!(p["model_type"], "mln-boost");
    assert_eq!(p["examples"], 30);
    let auc = p["auc_roc"].as_f64().expect("auc");
    assert!(auc > 0.7 && auc <= 1.0, "{auc}");
    let s = ok(&srl(&["boost", "show", "--model", &m]));
    assert!(s.contains("MLN-Boost model for cancer/1"), "{s}");
    assert!(s.contains("=> cancer(a)"), "{s}");
    let sj = json(&srl(&["boost", "show", "--model", &m, "--json"]));
    let clauses = sj["clauses"].as_array().expect("clauses");
    assert!(clauses.len() >= 2, "{sj}");
    assert_eq!(clauses[0]["formula"], "cancer(a)");
    // Same seed, same model file content (but for the provenance's command line).
    let first = file["model"].clone();
    json(&learn(&[]));
    let again: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&m).expect("model")).expect("json");
    assert_eq!(again["model"], first);
    // No soft margin for MLN-Boost.
    fails(&learn(&["--alpha", "1"]), &["--alpha", "MLN-Boost"]);
}

#[test]
fn boost_bad_input() {
    let t = tempfile::tempdir().expect("tempdir");
    let m = t.path().join("m.json").display().to_string();
    // A missing folder.
    fails(
        &srl(&[
            "boost",
            "learn",
            "--train",
            "/no/such/dir",
            "--target",
            "x",
            "--model",
            &m,
        ]),
        &["/no/such/dir"],
    );
    // A malformed line: file and line named.
    let bad = t.path().join("bad");
    std::fs::create_dir_all(&bad).expect("mkdir");
    for f in ["train_pos.txt", "train_neg.txt"] {
        std::fs::copy(fixtures().join("boost/train").join(f), bad.join(f)).expect("copy");
    }
    std::fs::write(bad.join("train_facts.txt"), "smokes(p1).\nsmokes(p2\n").expect("write");
    fails(
        &srl(&[
            "boost",
            "learn",
            "--train",
            &bad.display().to_string(),
            "--target",
            "cancer",
            "--model",
            &m,
        ]),
        &["train_facts.txt", "2"],
    );
    assert!(!Path::new(&m).exists(), "no model file after a failure");
    // A model file of another version; no prediction file written.
    ok(&srl(&[
        "boost",
        "learn",
        "--train",
        &fx("boost/train"),
        "--target",
        "cancer",
        "--trees",
        "1",
        "--model",
        &m,
        "--quiet",
    ]));
    let text = std::fs::read_to_string(&m).expect("model");
    let v2 = t.path().join("v2.json");
    std::fs::write(&v2, text.replacen("\"version\": 1", "\"version\": 2", 1)).expect("write");
    let out = t.path().join("p.tsv");
    fails(
        &srl(&[
            "boost",
            "predict",
            "--model",
            &v2.display().to_string(),
            "--test",
            &fx("boost/test"),
            "--out",
            &out.display().to_string(),
        ]),
        &["v2.json", "version 2", "version 1"],
    );
    assert!(!out.exists());
    // Not a model file at all.
    fails(
        &srl(&["boost", "show", "--model", &fx("grid.uai")]),
        &["grid.uai", "JSON"],
    );
    // A model of another kind.
    let other = t.path().join("other.json");
    std::fs::write(
        &other,
        text.replacen("\"kind\": \"soft-rfgb\"", "\"kind\": \"naive-bayes\"", 1),
    )
    .expect("write");
    fails(
        &srl(&["boost", "show", "--model", &other.display().to_string()]),
        &["naive-bayes", "soft-rfgb"],
    );
    assert_eq!(
        dir_entries(t.path()),
        vec!["bad", "m.json", "other.json", "v2.json"]
    );
}

#[test]
fn mrf_mar_and_map_formats() {
    let t = tempfile::tempdir().expect("tempdir");
    let out = t.path().join("grid.MAR");
    let o = srl(&[
        "mrf",
        &fx("grid.uai"),
        "--evidence",
        &fx("grid.uai.evid"),
        "--task",
        "mar",
        "--algorithm",
        "lbp",
        "--out",
        &out.display().to_string(),
    ]);
    ok(&o);
    assert!(
        stderr(&o).contains("converged"),
        "convergence on stderr: {}",
        stderr(&o)
    );
    let mar = std::fs::read_to_string(&out).expect("MAR");
    let mut lines = mar.lines();
    assert_eq!(lines.next(), Some("MAR"));
    let toks: Vec<&str> = lines.next().expect("line 2").split_whitespace().collect();
    assert_eq!(toks[0], "9");
    assert_eq!(toks.len(), 1 + 9 * 3);
    // Variable 4 is observed in state 1.
    assert_eq!(&toks[13..16], &["2", "0", "1"]);
    for alg in ["mean-field", "gibbs", "exact"] {
        let s = ok(&srl(&[
            "mrf",
            &fx("grid.uai"),
            "--algorithm",
            alg,
            "--quiet",
        ]));
        assert!(s.starts_with("MAR\n9 2 "), "{alg}: {s}");
    }
    for alg in ["lbp", "exact", "icm", "gibbs", "mean-field"] {
        let s = ok(&srl(&[
            "mrf",
            &fx("grid.uai"),
            "--task",
            "map",
            "--algorithm",
            alg,
            "--quiet",
        ]));
        let mut l = s.lines();
        assert_eq!(l.next(), Some("MAP"));
        assert_eq!(
            l.next().expect("states").split_whitespace().count(),
            10,
            "{alg}"
        );
    }
    // Exact MAP and max-product agree on this grid; the JSON summary carries the score.
    let a = json(&srl(&[
        "mrf",
        &fx("grid.uai"),
        "--task",
        "map",
        "--algorithm",
        "exact",
        "--json",
    ]));
    let b = json(&srl(&[
        "mrf",
        &fx("grid.uai"),
        "--task",
        "map",
        "--algorithm",
        "icm",
        "--json",
    ]));
    assert!(a["log_score"].as_f64() >= b["log_score"].as_f64());
}

#[test]
fn mrf_gives_the_library_marginals() {
    let path = fixtures().join("grid.uai");
    let mrf = srl_infer::PairwiseMrf::read_uai(&path).expect("read");
    let ev = srl_infer::read_uai_evidence(fixtures().join("grid.uai.evid"), mrf.num_nodes())
        .expect("evidence");
    let mrf = mrf.with_evidence(ev).expect("evidence applies");
    let lib_lbp = srl_infer::LoopyBp::default().run(&mrf);
    let lib_exact = srl_infer::Exact::default().marginals(&mrf).expect("exact");
    for (alg, lib) in [("lbp", &lib_lbp), ("exact", &lib_exact)] {
        let j = json(&srl(&[
            "mrf",
            &fx("grid.uai"),
            "--evidence",
            &fx("grid.uai.evid"),
            "--algorithm",
            alg,
            "--json",
            "--quiet",
        ]));
        let m = j["marginals"].as_array().expect("marginals");
        for (v, row) in m.iter().enumerate() {
            for (x, p) in row.as_array().expect("row").iter().enumerate() {
                let p = p.as_f64().expect("number");
                assert_eq!(p, lib.node(v)[x], "{alg} variable {v} state {x}");
            }
        }
    }
    // And loopy BP is close to exact on this small grid.
    for v in 0..mrf.num_nodes() {
        assert!((lib_lbp.node(v)[0] - lib_exact.node(v)[0]).abs() < 0.05);
    }
}

#[test]
fn mrf_bad_input() {
    let t = tempfile::tempdir().expect("tempdir");
    let out = t.path().join("x.MAR");
    let o = out.display().to_string();
    fails(
        &srl(&["mrf", "/no/such.uai", "--out", &o]),
        &["/no/such.uai"],
    );
    let bad = t.path().join("bad.uai");
    std::fs::write(&bad, "MARKOV\n2\n2 2\n1\n2 0 x\n").expect("write");
    fails(
        &srl(&["mrf", &bad.display().to_string(), "--out", &o]),
        &["bad.uai", ":5"],
    );
    let ev = t.path().join("bad.evid");
    std::fs::write(&ev, "1 42 0\n").expect("write");
    fails(
        &srl(&[
            "mrf",
            &fx("grid.uai"),
            "--evidence",
            &ev.display().to_string(),
            "--out",
            &o,
        ]),
        &["bad.evid", "42"],
    );
    fails(
        &srl(&["mrf", &fx("grid.uai"), "--algorithm", "icm", "--out", &o]),
        &["icm", "map"],
    );
    fails(
        &srl(&["mrf", &fx("grid.uai"), "--damping", "1.5", "--out", &o]),
        &["--damping"],
    );
    assert_eq!(dir_entries(t.path()), vec!["bad.evid", "bad.uai"]);
}

#[test]
fn classify_every_method_and_protocol() {
    let t = tempfile::tempdir().expect("tempdir");
    let out = t.path().join("pred.csv");
    let o = out.display().to_string();
    let j = json(&srl(&[
        "classify",
        "--nodes",
        &fx("graph_nodes.csv"),
        "--edges",
        &fx("graph_edges.csv"),
        "--method",
        "ica",
        "--local",
        "nb",
        "--folds",
        "3",
        "--out",
        &o,
        "--json",
        "--quiet",
    ]));
    assert_eq!(j["predicted"], 24);
    assert!(j["accuracy"].as_f64().expect("accuracy") > 0.6, "{j}");
    let csv = std::fs::read_to_string(&out).expect("csv");
    assert!(csv.starts_with("node,label,fold,p_a,p_b\n"), "{csv}");
    assert_eq!(csv.lines().count(), 25);
    for (method, local) in [
        ("co", "lr"),
        ("co", "nb"),
        ("ica", "lr"),
        ("gs", "nb"),
        ("lbp", "lr"),
        ("mf", "lr"),
    ] {
        let j = json(&srl(&[
            "classify",
            "--content",
            &fx("graph.content"),
            "--cites",
            &fx("graph.cites"),
            "--method",
            method,
            "--local",
            local,
            "--train-fraction",
            "0.5",
            "--seed",
            "3",
            "--json",
            "--quiet",
        ]));
        assert_eq!(j["predicted"], 12, "{method}/{local}");
        let acc = j["accuracy"].as_f64().expect("accuracy");
        assert!((0.0..=1.0).contains(&acc), "{method}/{local}: {acc}");
    }
    let j = json(&srl(&[
        "classify",
        "--content",
        &fx("graph.content"),
        "--cites",
        &fx("graph.cites"),
        "--method",
        "gs",
        "--train-mask",
        &fx("train_mask.txt"),
        "--json",
        "--quiet",
    ]));
    assert_eq!(j["predicted"], 8);
    // Same seed, same result.
    let a = stdout(&srl(&[
        "classify",
        "--nodes",
        &fx("graph_nodes.csv"),
        "--edges",
        &fx("graph_edges.csv"),
        "--method",
        "gs",
        "--folds",
        "2",
        "--seed",
        "9",
        "--quiet",
        "--json",
    ]));
    let b = stdout(&srl(&[
        "classify",
        "--nodes",
        &fx("graph_nodes.csv"),
        "--edges",
        &fx("graph_edges.csv"),
        "--method",
        "gs",
        "--folds",
        "2",
        "--seed",
        "9",
        "--quiet",
        "--json",
    ]));
    let strip = |s: &str| -> serde_json::Value {
        let mut v: serde_json::Value = serde_json::from_str(s).expect("json");
        v["seconds"] = serde_json::Value::Null;
        v["method_seconds"] = serde_json::Value::Null;
        v
    };
    assert_eq!(strip(&a), strip(&b));
}

/// `srl classify --train-mask M --seed S` equals srl-py's estimators (srl-learn's
/// `transduce` with `random_state = S`) on the graph whose non-mask labels are unknown:
/// one pipeline, one split stream, the same labels for every method.
#[test]
fn classify_train_mask_equals_the_python_pipeline() {
    use srl_learn::collective::{CollectiveMethod, CollectiveSettings, transduce};
    let g = srl_graph::load_csv(
        &fixtures().join("graph_nodes.csv"),
        &fixtures().join("graph_edges.csv"),
        &Default::default(),
    )
    .expect("fixture")
    .graph;
    let mask = std::fs::read_to_string(fixtures().join("train_mask.txt")).expect("mask");
    let train: Vec<&str> = mask
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let labels: Vec<Option<u32>> = (0..g.num_nodes())
        .map(|v| {
            let name = g.node_name(srl_graph::NodeId::new(v));
            if train.contains(&name) {
                g.labels()[v]
            } else {
                None
            }
        })
        .collect();
    let hidden = g.with_labels(labels).expect("labels");
    let t = tempfile::tempdir().expect("tempdir");
    for (algo, local, m) in [
        (
            "ica",
            "lr",
            CollectiveMethod::Ica(srl_learn::LocalModel::Lr),
        ),
        ("gs", "nb", CollectiveMethod::Gs(srl_learn::LocalModel::Nb)),
        ("mf", "lr", CollectiveMethod::Mf),
    ] {
        let out = t.path().join(format!("{algo}.csv"));
        ok(&srl(&[
            "classify",
            "--nodes",
            &fx("graph_nodes.csv"),
            "--edges",
            &fx("graph_edges.csv"),
            "--method",
            algo,
            "--local",
            local,
            "--train-mask",
            &fx("train_mask.txt"),
            "--seed",
            "7",
            "--out",
            &out.display().to_string(),
            "--quiet",
        ]));
        let py = transduce(&CollectiveSettings::default(), m, &hidden, 7).expect("pipeline");
        let names = g.label_set().names();
        let csv = std::fs::read_to_string(&out).expect("csv");
        let mut rows = 0;
        for line in csv.lines().skip(1) {
            let f: Vec<&str> = line.split(',').collect();
            let v = (0..g.num_nodes())
                .find(|&v| g.node_name(srl_graph::NodeId::new(v)) == f[0])
                .expect("node");
            assert_eq!(f[1], names[py.labels[v] as usize], "{algo} node {}", f[0]);
            let k = names.len();
            for (c, p) in f[3..].iter().enumerate() {
                let p: f64 = p.parse().expect("probability");
                assert_eq!(
                    p,
                    py.probabilities[v * k + c],
                    "{algo} node {} class {c}",
                    f[0]
                );
            }
            rows += 1;
        }
        assert_eq!(rows, g.num_nodes() - train.len(), "{algo}");
    }
}

/// `srl classify --folds K --seed S` is srl-learn's pipeline with the experiment's streams:
/// for every method, its accuracy equals the one the pipeline gives when all the
/// experiment's methods run together on protocol stream 0 (how `cargo xtask reproduce
/// collective-classification` runs Cora RS), to the last bit. Random and snowball samples.
#[test]
fn classify_equals_the_pipeline_the_experiment_runs() {
    use srl_learn::collective::{CollectiveMethod, CollectiveSettings, Protocol, evaluate};
    let g = srl_graph::load_csv(
        &fixtures().join("graph_nodes.csv"),
        &fixtures().join("graph_edges.csv"),
        &Default::default(),
    )
    .expect("fixture")
    .graph;
    let seed = 20_061_001;
    for (sampling, protocol, stream) in [
        ("random", Protocol::RandomFolds { k: 3 }, 0),
        ("snowball", Protocol::Snowball { k: 3 }, 0),
    ] {
        let tests = protocol.test_sets(&g, seed, stream).expect("tests");
        let settings = CollectiveSettings::default();
        let all =
            evaluate(&settings, &CollectiveMethod::ALL, &g, tests, seed, stream).expect("pipeline");
        for (mi, m) in CollectiveMethod::ALL.iter().enumerate() {
            use srl_learn::collective::CsBase;
            let (algo, local, base) = match m {
                CollectiveMethod::Co(l) => ("co", l.name(), None),
                CollectiveMethod::Ica(l) => ("ica", l.name(), None),
                CollectiveMethod::Gs(l) => ("gs", l.name(), None),
                CollectiveMethod::Lbp => ("lbp", "LR", None),
                CollectiveMethod::Mf => ("mf", "LR", None),
                CollectiveMethod::Lp => ("lp", "LR", None),
                CollectiveMethod::Mlp => ("mlp", "LR", None),
                CollectiveMethod::Gcn => ("gcn", "LR", None),
                CollectiveMethod::Appnp => ("appnp", "LR", None),
                CollectiveMethod::Cs(CsBase::Mlp) => ("cs", "LR", Some("mlp")),
                CollectiveMethod::Cs(CsBase::Lr) => ("cs", "LR", Some("lr")),
            };
            let local = local.to_lowercase();
            let (nodes, edges) = (fx("graph_nodes.csv"), fx("graph_edges.csv"));
            let mut args = vec![
                "classify",
                "--nodes",
                &nodes,
                "--edges",
                &edges,
                "--method",
                algo,
                "--local",
                &local,
                "--folds",
                "3",
                "--sampling",
                sampling,
                "--seed",
                "20061001",
                "--json",
                "--quiet",
            ];
            if let Some(b) = base {
                args.extend(["--cs-base", b]);
            }
            let j = json(&srl(&args));
            assert_eq!(j["name"], m.name());
            let want = if sampling == "random" {
                all.accuracy[mi].iter().sum::<f64>() / all.accuracy[mi].len() as f64
            } else {
                all.per_node[mi]
            };
            let got = j["accuracy"].as_f64().expect("accuracy");
            assert_eq!(
                got.to_bits(),
                want.to_bits(),
                "{m} {sampling}: {got} vs {want}"
            );
            let folds: Vec<f64> = j["fold_accuracy"]
                .as_array()
                .expect("folds")
                .iter()
                .map(|x| x.as_f64().expect("f64"))
                .collect();
            assert_eq!(folds, all.accuracy[mi], "{m} {sampling}");
        }
    }
}

#[test]
fn classify_bad_input() {
    let t = tempfile::tempdir().expect("tempdir");
    let out = t.path().join("pred.csv");
    let o = out.display().to_string();
    fails(
        &srl(&[
            "classify",
            "--content",
            "/no/x.content",
            "--cites",
            &fx("graph.cites"),
            "--folds",
            "2",
            "--out",
            &o,
        ]),
        &["/no/x.content"],
    );
    let bad = t.path().join("bad.csv");
    std::fs::write(&bad, "id,label,f0,f1,f2\nn0,a,1,0,0\nn1,b,1,zero,0\n").expect("write");
    fails(
        &srl(&[
            "classify",
            "--nodes",
            &bad.display().to_string(),
            "--edges",
            &fx("graph_edges.csv"),
            "--folds",
            "2",
            "--out",
            &o,
        ]),
        &["bad.csv", "3"],
    );
    let mask = t.path().join("mask.txt");
    std::fs::write(&mask, "n1\nnobody\n").expect("write");
    fails(
        &srl(&[
            "classify",
            "--nodes",
            &fx("graph_nodes.csv"),
            "--edges",
            &fx("graph_edges.csv"),
            "--train-mask",
            &mask.display().to_string(),
            "--out",
            &o,
        ]),
        &["mask.txt:2", "nobody"],
    );
    fails(
        &srl(&[
            "classify",
            "--nodes",
            &fx("graph_nodes.csv"),
            "--edges",
            &fx("graph_edges.csv"),
            "--train-fraction",
            "1.5",
            "--out",
            &o,
        ]),
        &["--train-fraction"],
    );
    assert_eq!(dir_entries(t.path()), vec!["bad.csv", "mask.txt"]);
}

#[test]
fn trim_bif_with_costs_and_leaves() {
    let j = json(&srl(&[
        "trim",
        &fx("tiny.bif"),
        "--class",
        "C=yes",
        "--features",
        "leaves",
        "--threshold",
        "0.5",
        "--budget",
        "2",
        "--json",
        "--quiet",
    ]));
    let subset = j["subset"].as_array().expect("subset");
    assert!(subset.len() <= 2 && !subset.is_empty(), "{j}");
    let eca = j["eca"].as_f64().expect("eca");
    assert!(eca > 0.5 && eca <= 1.0);
    assert!(j["evaluations"].as_u64().expect("evaluations") > 0);
    let text = ok(&srl(&[
        "trim",
        &fx("tiny.bif"),
        "--class",
        "C=0",
        "--features",
        "A,B,D",
        "--threshold",
        "0.5",
        "--budget",
        "2",
        "--costs",
        &fx("costs.txt"),
    ]));
    assert!(text.contains("ECA") && text.contains("threshold") && text.contains("evaluations"));
}

#[test]
fn trim_bad_input() {
    let t = tempfile::tempdir().expect("tempdir");
    fails(
        &srl(&[
            "trim",
            "/no/net.bif",
            "--class",
            "C=yes",
            "--features",
            "leaves",
            "--threshold",
            "0.5",
            "--budget",
            "1",
        ]),
        &["/no/net.bif"],
    );
    fails(
        &srl(&[
            "trim",
            &fx("tiny.bif"),
            "--class",
            "Z=yes",
            "--features",
            "leaves",
            "--threshold",
            "0.5",
            "--budget",
            "1",
        ]),
        &["tiny.bif", "Z"],
    );
    fails(
        &srl(&[
            "trim",
            &fx("tiny.bif"),
            "--class",
            "C=maybe",
            "--features",
            "leaves",
            "--threshold",
            "0.5",
            "--budget",
            "1",
        ]),
        &["maybe", "yes, no"],
    );
    let costs = t.path().join("costs.txt");
    std::fs::write(&costs, "A 1\nB two\n").expect("write");
    fails(
        &srl(&[
            "trim",
            &fx("tiny.bif"),
            "--class",
            "C=yes",
            "--features",
            "A,B",
            "--threshold",
            "0.5",
            "--budget",
            "1",
            "--costs",
            &costs.display().to_string(),
        ]),
        &["costs.txt:2", "two"],
    );
    let bif = t.path().join("bad.bif");
    std::fs::write(&bif, "network x {\n}\nvariable C {\n  type discrete [ 2 ] { a b };\n}\nprobability ( C ) {\n  table 0.4 ;\n}\n").expect("write");
    let o = srl(&[
        "trim",
        &bif.display().to_string(),
        "--class",
        "C=a",
        "--features",
        "leaves",
        "--threshold",
        "0.5",
        "--budget",
        "1",
    ]);
    fails(&o, &["bad.bif"]);
}

#[test]
fn data_verify_and_fetch_offline() {
    let t = tempfile::tempdir().expect("tempdir");
    let d = t.path().display().to_string();
    // An empty data directory: everything missing, nothing failing.
    let j = json(&srl(&["data", "verify", "--data-dir", &d, "--json"]));
    assert!(j["datasets"].as_array().expect("datasets").len() >= 19);
    let list = ok(&srl(&["data", "list"]));
    assert!(list.contains("cora") && list.contains("sotu"));
    // A present file that fails verification: reported, and never replaced without --force.
    std::fs::create_dir_all(t.path().join("uai_asia")).expect("mkdir");
    std::fs::write(t.path().join("uai_asia/asia.uai"), "MARKOV\n").expect("write");
    fails(
        &srl(&["data", "verify", "uai_asia", "--data-dir", &d]),
        &["fail"],
    );
    fails(
        &srl(&["data", "fetch", "uai_asia", "--data-dir", &d]),
        &["asia.uai", "--force"],
    );
    assert_eq!(
        std::fs::read_to_string(t.path().join("uai_asia/asia.uai")).expect("read"),
        "MARKOV\n"
    );
    fails(
        &srl(&["data", "fetch", "nope", "--data-dir", &d]),
        &["nope", "cora"],
    );
}

/// `srl boost learn` + `predict` on IMDB `workedUnder` fold 1 gives the AUC-ROC of the
/// same library calls (BoostSRL preset, seed 1, ChaCha8).
#[test]
fn boost_imdb_fold1_matches_the_library() {
    let Some(data) = std::env::var_os("SRL_DATA_DIR").map(PathBuf::from) else {
        eprintln!(
            "skipped: SRL_DATA_DIR is not set (looked for $SRL_DATA_DIR/boostsrl_imdb/workedunder_5fold/Fold1)"
        );
        return;
    };
    let fold = data.join("boostsrl_imdb/workedunder_5fold/Fold1");
    if !fold.is_dir() {
        eprintln!("skipped: {} is absent", fold.display());
        return;
    }
    let t = tempfile::tempdir().expect("tempdir");
    let m = t.path().join("m.json").display().to_string();
    let train = fold.join("train");
    let test = fold.join("test");
    ok(&srl(&[
        "boost",
        "learn",
        "--train",
        &train.display().to_string(),
        "--target",
        "workedUnder",
        "--preset",
        "boostsrl",
        "--seed",
        "1",
        "--model",
        &m,
        "--quiet",
    ]));
    let j = json(&srl(&[
        "boost",
        "predict",
        "--model",
        &m,
        "--test",
        &test.display().to_string(),
        "--json",
    ]));
    let cli_auc = j["auc_roc"].as_f64().expect("auc");

    let bk = srl_boost::read_background(&train.join("train_bk.txt")).expect("bk");
    let tr = srl_boost::load_split(
        &train,
        "train",
        "workedUnder",
        &bk,
        srl_boost::OtherTargets::PositivesAsFacts,
    )
    .expect("train");
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let model = srl_boost::SoftRfgbParams::default()
        .fit(&tr.db, &bk, &tr.examples, &mut rng)
        .expect("fit");
    let tbk = srl_boost::read_background(&test.join("test_bk.txt")).expect("bk");
    let te = srl_boost::load_split(
        &test,
        "test",
        "workedUnder",
        &tbk,
        srl_boost::OtherTargets::PositivesAsFacts,
    )
    .expect("test");
    let p = model.predict_proba(&te.db, &te.examples).expect("predict");
    let lib_auc = srl_eval::metrics::auc_roc(&p, te.examples.labels()).expect("auc");
    assert_eq!(cli_auc, lib_auc);
    assert!(lib_auc > 0.5);
}

/// `setParam:` lines of the background apply (and are reported); `--ignore-setparam`
/// turns them off; `--neg-ratio 0` keeps every negative.
#[test]
fn boost_setparam_and_options() {
    let t = tempfile::tempdir().expect("tempdir");
    let train = t.path().join("train");
    std::fs::create_dir_all(&train).expect("mkdir");
    for f in ["train_pos.txt", "train_neg.txt", "train_facts.txt"] {
        std::fs::copy(fixtures().join("boost/train").join(f), train.join(f)).expect("copy");
    }
    let bk = std::fs::read_to_string(fixtures().join("boost/bk.txt")).expect("bk");
    std::fs::write(
        train.join("train_bk.txt"),
        format!("{bk}setParam: numOfClauses=2.\n"),
    )
    .expect("write");
    let tr = train.display().to_string();
    let m = t.path().join("m.json").display().to_string();
    let leaves = |extra: &[&str]| -> (usize, serde_json::Value) {
        let mut args = vec![
            "boost", "learn", "--train", &tr, "--target", "cancer", "--trees", "2", "--model", &m,
            "--json", "--quiet", "--force",
        ];
        args.extend_from_slice(extra);
        let j = json(&srl(&args));
        let show = json(&srl(&["boost", "show", "--model", &m, "--json"]));
        let most = show["trees"]
            .as_array()
            .expect("trees")
            .iter()
            .map(|c| c["clauses"].as_array().expect("clauses").len())
            .max()
            .unwrap_or(0);
        (most, j)
    };
    let (with, j) = leaves(&[]);
    // numOfClauses = 2 inner nodes, as BoostSRL counts them: at most 3 leaves
    assert!(with <= 3, "numOfClauses=2 applied: {with} leaves");
    assert!(
        j["settings"]
            .as_str()
            .is_some_and(|s| s.contains("max_leaves")),
        "{j}"
    );
    let (without, _) = leaves(&["--ignore-setparam"]);
    assert!(without > 3, "{without} leaves without the setParam line");
    let (_, all) = leaves(&["--neg-ratio", "0"]);
    assert_eq!(all["train_examples_used"], 30);
}

/// The advice fixture of srl-boost (`crates/srl-boost/tests/fixtures/advice`).
fn advice_fx(p: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../srl-boost/tests/fixtures/advice")
        .join(p)
        .display()
        .to_string()
}

/// `--advice FILE [--advice-weight W]` (BoostSRL `-adviceFile`, `-adviceWt`): the model
/// file records the advice (and its weight in the parameters), the summary reports the
/// advised examples, and the scarce-data fixture is ranked better than without advice
/// (AUC-ROC 0.833 against 0.5, as the library test `advice_helps_scarce_data`).
#[test]
fn boost_learn_with_advice() {
    let t = tempfile::tempdir().expect("tempdir");
    let learn = |model: &str, extra: &[&str]| {
        let train = advice_fx("train");
        let mut args = vec![
            "boost", "learn", "--train", &train, "--target", "cancer", "--model", model, "--json",
        ];
        args.extend_from_slice(extra);
        json(&srl(&args))
    };
    let with = t.path().join("with.json").display().to_string();
    let without = t.path().join("without.json").display().to_string();
    let advice = advice_fx("advice.txt");
    let j = learn(&with, &["--advice", &advice]);
    assert_eq!(j["advice"]["weight"], 0.5, "{j}");
    assert_eq!(j["advice"]["preferred_examples"], 2, "{j}");
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&with).expect("model")).expect("json");
    assert_eq!(file["model"]["advice"]["pieces"], 1);
    assert_eq!(file["parameters"]["advice_weight"], 0.5);
    let j = learn(&without, &[]);
    assert!(j.get("advice").is_none(), "{j}");
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&without).expect("model")).expect("json");
    assert!(file["model"].get("advice").is_none());
    let auc = |m: &str| {
        let o = srl(&[
            "boost",
            "predict",
            "--model",
            m,
            "--test",
            &advice_fx("test"),
            "--json",
        ]);
        json(&o)["auc_roc"].as_f64().expect("auc")
    };
    let shown = ok(&srl(&["boost", "show", "--model", &with]));
    assert!(shown.contains("% learned with advice"), "{shown}");
    let sj = json(&srl(&["boost", "show", "--model", &with, "--json"]));
    assert_eq!(sj["advice"]["weight"], 0.5);
    let sj = json(&srl(&["boost", "show", "--model", &without, "--json"]));
    assert!(sj.get("advice").is_none());
    let (a, b) = (auc(&with), auc(&without));
    assert!(a > b + 0.3, "with advice {a}, without {b}");
    // a weight of 0 gives the data-only trees
    let zero = t.path().join("zero.json").display().to_string();
    learn(&zero, &["--advice", &advice, "--advice-weight", "0"]);
    assert_eq!(auc(&zero), b);
    // flags that do not go together
    let train = advice_fx("train");
    let m = t.path().join("x.json").display().to_string();
    for (extra, needle) in [
        (vec!["--advice-weight", "0.3"], "--advice-weight"),
        (
            vec!["--advice", &advice, "--advice-weight", "1.5"],
            "[0, 1]",
        ),
        (vec!["--advice", &advice, "--model-type", "mln"], "--advice"),
        (vec!["--advice", &advice, "--regression"], "--advice"),
    ] {
        let mut args = vec![
            "boost", "learn", "--train", &train, "--target", "cancer", "--model", &m,
        ];
        args.extend(extra);
        fails(&srl(&args), &[needle]);
    }
    assert!(!Path::new(&m).exists());
}

/// `--target a,b` (BoostSRL `-target a,b,c`): one model file per target from the
/// `--model` template, each the model `--target a` alone learns; `predict --target a,b`
/// scores each and prints the metrics per target; existing outputs are refused without
/// `--force`.
#[test]
fn boost_joint_targets() {
    let t = tempfile::tempdir().expect("tempdir");
    let tpl = t.path().join("out.json").display().to_string();
    let train = fx("boost_joint/train");
    let test = fx("boost_joint/test");
    let o = srl(&[
        "boost",
        "learn",
        "--train",
        &train,
        "--target",
        "cancer,smokes",
        "--trees",
        "3",
        "--model",
        &tpl,
        "--json",
    ]);
    let j = json(&o);
    let targets = j["targets"].as_array().expect("targets");
    assert_eq!(targets.len(), 2);
    assert_eq!(targets[0]["target"], "cancer");
    assert_eq!(targets[1]["target"], "smokes");
    assert_eq!(
        dir_entries(t.path()),
        ["out.cancer.json", "out.smokes.json"]
    );
    // each file is the single-target run's model
    let single = t.path().join("single.json").display().to_string();
    ok(&srl(&[
        "boost", "learn", "--train", &train, "--target", "smokes", "--trees", "3", "--model",
        &single, "--quiet",
    ]));
    let model = |p: &Path| -> serde_json::Value {
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(p).expect("model")).expect("json");
        v["model"].clone()
    };
    assert_eq!(
        model(&t.path().join("out.smokes.json")),
        model(Path::new(&single))
    );
    // outputs exist: refused without --force, replaced with it
    let again = [
        "boost",
        "learn",
        "--train",
        &train,
        "--target",
        "cancer,smokes",
        "--trees",
        "3",
        "--model",
        &tpl,
    ];
    fails(&srl(&again), &["out.cancer.json", "--force"]);
    let mut forced = again.to_vec();
    forced.push("--force");
    ok(&srl(&forced));
    // predict per target
    let out = t.path().join("p.tsv").display().to_string();
    let o = srl(&[
        "boost",
        "predict",
        "--model",
        &tpl,
        "--target",
        "cancer,smokes",
        "--test",
        &test,
        "--out",
        &out,
        "--json",
    ]);
    let j = json(&o);
    let per = j["targets"].as_array().expect("targets");
    assert_eq!(per.len(), 2);
    assert_eq!(per[1]["target"], "smokes");
    assert!(per[0]["auc_roc"].as_f64().is_some_and(f64::is_finite));
    assert!(t.path().join("p.cancer.tsv").is_file() && t.path().join("p.smokes.tsv").is_file());
    let text = ok(&srl(&[
        "boost",
        "predict",
        "--model",
        &tpl,
        "--target",
        "cancer,smokes",
        "--test",
        &test,
    ]));
    assert!(
        text.contains("of cancer") && text.contains("of smokes"),
        "{text}"
    );
    // MLN-Boost models too
    let mln = t.path().join("mln.json").display().to_string();
    let j = json(&srl(&[
        "boost",
        "learn",
        "--train",
        &train,
        "--target",
        "cancer,smokes",
        "--trees",
        "2",
        "--model-type",
        "mln",
        "--model",
        &mln,
        "--json",
    ]));
    assert_eq!(j["targets"][1]["model_type"], "mln-boost", "{j}");
    assert!(t.path().join("mln.smokes.json").is_file());
    // advice over both targets: each model gets the pieces naming it
    let adv = t.path().join("a.txt");
    std::fs::write(&adv, "cancer\n!cancer\nc.txt\nsmokes\n!smokes\ns.txt\n").expect("write");
    std::fs::write(t.path().join("c.txt"), "4.0 cancer(A) :- stress(A).\n").expect("write");
    std::fs::write(
        t.path().join("s.txt"),
        "-4.0 smokes(A) :- stress(A).\n4.0 smokes(A).\n",
    )
    .expect("write");
    let advised = t.path().join("adv.json").display().to_string();
    let j = json(&srl(&[
        "boost",
        "learn",
        "--train",
        &train,
        "--target",
        "cancer,smokes",
        "--trees",
        "2",
        "--advice",
        &adv.display().to_string(),
        "--model",
        &advised,
        "--json",
    ]));
    // stress(a), stress(c), stress(g): cancer's advice covers them, smokes's the 4 others
    assert_eq!(j["targets"][0]["advice"]["preferred_examples"], 3, "{j}");
    assert_eq!(j["targets"][1]["advice"]["preferred_examples"], 4, "{j}");
    // one target: the model must be of it
    let cancer = t.path().join("out.cancer.json").display().to_string();
    fails(
        &srl(&[
            "boost", "predict", "--model", &cancer, "--target", "smokes", "--test", &test,
        ]),
        &["of target cancer, not smokes"],
    );
    // a target without atoms: nothing is written
    let t2 = tempfile::tempdir().expect("tempdir");
    let tpl2 = t2.path().join("o.json").display().to_string();
    fails(
        &srl(&[
            "boost",
            "learn",
            "--train",
            &train,
            "--target",
            "cancer,flu",
            "--model",
            &tpl2,
        ]),
        &["no atom of target `flu`"],
    );
    assert!(dir_entries(t2.path()).is_empty());
    fails(
        &srl(&[
            "boost",
            "learn",
            "--train",
            &train,
            "--target",
            "cancer,,smokes",
            "--model",
            &tpl2,
        ]),
        &["empty target name"],
    );
}

/// `srl classify --train-mask M --validation-mask V --seed S` equals srl-learn's
/// `transduce_with_validation` (srl-py's `fit(..., validation=V)`) on the graph whose
/// labels outside M and V are unknown, for every neural method; and differs from the
/// run without `--validation-mask` (a random hold-out of M).
#[test]
fn classify_validation_mask_equals_transduce_with_validation() {
    use srl_learn::collective::{
        CollectiveMethod, CollectiveSettings, CsBase, transduce_with_validation,
    };
    let g = srl_graph::load_csv(
        &fixtures().join("graph_nodes.csv"),
        &fixtures().join("graph_edges.csv"),
        &Default::default(),
    )
    .expect("fixture")
    .graph;
    let name = |v: usize| g.node_name(srl_graph::NodeId::new(v)).to_owned();
    let index = |n: &str| (0..g.num_nodes()).find(|&v| name(v) == n).expect("node");
    let train = ["n1", "n2", "n4", "n5", "n13", "n14", "n16", "n17"];
    let val = ["n7", "n8", "n19", "n20"];
    let t = tempfile::tempdir().expect("tempdir");
    let (tm, vm) = (t.path().join("t.txt"), t.path().join("v.txt"));
    std::fs::write(&tm, train.map(|n| format!("{n}\n")).concat()).expect("write");
    std::fs::write(&vm, val.map(|n| format!("{n}\n")).concat()).expect("write");
    let labels: Vec<Option<u32>> = (0..g.num_nodes())
        .map(|v| {
            let n = name(v);
            if train.contains(&n.as_str()) || val.contains(&n.as_str()) {
                g.labels()[v]
            } else {
                None
            }
        })
        .collect();
    let hidden = g.with_labels(labels).expect("labels");
    let mut validation: Vec<usize> = val.iter().map(|n| index(n)).collect();
    validation.sort_unstable();
    for (algo, m) in [
        ("mlp", CollectiveMethod::Mlp),
        ("gcn", CollectiveMethod::Gcn),
        ("appnp", CollectiveMethod::Appnp),
        ("cs", CollectiveMethod::Cs(CsBase::Mlp)),
    ] {
        let run = |with_validation: bool| {
            let out = t.path().join(format!("{algo}-{with_validation}.csv"));
            let mut args = vec![
                "classify".to_owned(),
                "--nodes".into(),
                fx("graph_nodes.csv"),
                "--edges".into(),
                fx("graph_edges.csv"),
                "--method".into(),
                algo.into(),
                "--train-mask".into(),
                tm.display().to_string(),
                "--seed".into(),
                "5".into(),
                "--out".into(),
                out.display().to_string(),
                "--quiet".into(),
            ];
            if with_validation {
                args.extend(["--validation-mask".into(), vm.display().to_string()]);
            }
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            ok(&srl(&args));
            std::fs::read_to_string(&out).expect("csv")
        };
        let csv = run(true);
        let py =
            transduce_with_validation(&CollectiveSettings::default(), m, &hidden, &validation, 5)
                .expect("pipeline");
        let names = g.label_set().names();
        let k = names.len();
        let mut rows = 0;
        for line in csv.lines().skip(1) {
            let f: Vec<&str> = line.split(',').collect();
            let v = index(f[0]);
            assert!(
                !val.contains(&f[0]),
                "{algo}: validation node {} predicted",
                f[0]
            );
            assert_eq!(f[1], names[py.labels[v] as usize], "{algo} node {}", f[0]);
            for (c, p) in f[3..].iter().enumerate() {
                let p: f64 = p.parse().expect("probability");
                assert_eq!(
                    p,
                    py.probabilities[v * k + c],
                    "{algo} node {} class {c}",
                    f[0]
                );
            }
            rows += 1;
        }
        assert_eq!(rows, g.num_nodes() - train.len() - val.len(), "{algo}");
        assert_ne!(csv, run(false), "{algo}");
    }
}
