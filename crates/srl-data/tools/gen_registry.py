#!/usr/bin/env python3
"""Regenerates crates/srl-data/src/registry_data.rs from a data directory's SOURCE.md files.

Usage: python3 crates/srl-data/tools/gen_registry.py /work/shared/data > crates/srl-data/src/registry_data.rs

For every file a SOURCE.md lists with a sha256, the registry records that sum; for a
`.gz` file it also records the sha256 of the decompressed bytes (computed here), so a
re-compressed download (another gzip implementation) still verifies. It also records
each file's size in bytes (and a `.gz` file's decompressed size): fetch caps what it
reads from an archive entry or a download by these sizes. The download
addresses are the SOURCES table below, built from each SOURCE.md's provenance section.
"""
import gzip, hashlib, os, re, sys

ROOT = sys.argv[1]
RAW = "https://raw.githubusercontent.com"
GAT = f"{RAW}/paologentleman/Graph-Attention-Networks/af71700de635b274b7e1625854a5f5207e875eb5/data"
SRLEARN = f"{RAW}/srlearn/datasets/d80946409742cadff830fbff403d50feb36c5833"
BROWNLEE = f"{RAW}/jbrownlee/Datasets/d20fcb6402ae34e653d4513b00f39257bb37ed7f"

USED_BY = {
    "cora": "datasets, collective-classification",
    "citeseer": "datasets, collective-classification",
    "intel_lab": "datasets, sen-getoor-intel",
    "boostsrl_cora": "soft-rfgb", "boostsrl_imdb": "soft-rfgb", "boostsrl_uwcse": "soft-rfgb",
    "boostsrl_webkb": "soft-rfgb", "heart_uci": "soft-rfgb",
    "trimbn_networks": "trimming", "bnlearn_bif": "trimming", "uai_asia": "trimming",
    "uci_pima": "trimming", "uci_bupa": "trimming", "uci_heart_statlog": "trimming",
    "uci_heart_cleveland": "trimming", "uci_voting": "trimming", "uci_hepatitis": "trimming",
    "uci_glass": "trimming", "sotu": "uknn",
}

PIMA_HEADER = "pregnant,glucose,pressure,triceps,insulin,mass,pedigree,age,class"
GLASS_HEADER = "id,RI,Na,Mg,Al,Si,K,Ca,Ba,Fe,type"
BUPA_HEADER = "mcv,alkphos,sgpt,sgot,gammagt,drinks,selector"
CLEVELAND_HEADER = "age,sex,cp,trestbps,chol,fbs,restecg,thalach,exang,oldpeak,slope,ca,thal,num"
VOTING_HEADER = open(os.path.join(ROOT, "uci_voting", "house-votes-84.csv")).readline().rstrip("\n")


def sources(name, files):
    """(kind, url, dest, transform) tuples: kind Zip (dest = folder prefix) or Raw (dest = file)."""
    if name in ("cora", "citeseer"):
        return [("Zip", f"{GAT}/{name}.zip", "", "Gzip")]
    if name == "uai_asia":
        return [("Raw", f"{RAW}/TensorBFS/TensorInference.jl/7c23c46fbe9aa5a28f3910b7cd247b9dac3aa79b/example/asia/data/asia.uai", "asia.uai", "None")]
    if name == "heart_uci":
        base = f"{RAW}/peter-biz/AI-Project-1/83b4c0623db63e2247ecd8e25d43c6a41e640f6d/heart%2Bdisease"
        return [("Raw", f"{base}/{f}", f, "None") for f in files]
    if name == "uci_pima":
        return [("Raw", f"{BROWNLEE}/pima-indians-diabetes.csv", "pima-indians-diabetes.csv", f"PrependLine({PIMA_HEADER!r})"),
                ("Raw", f"{BROWNLEE}/pima-indians-diabetes.names", "pima-indians-diabetes.names", "None")]
    if name == "uci_glass":
        return [("Raw", f"{BROWNLEE}/glass.data", "glass.csv", f"PrependLine({GLASS_HEADER!r})"),
                ("Raw", f"{BROWNLEE}/glass.names", "glass.names", "None")]
    if name == "uci_bupa":
        base = f"{RAW}/amritmaj/SVM-Tree/fe84201f69778d5c9405025d3c783f80ee5c6780"
        return [("Raw", f"{base}/bupa.data", "bupa.csv", f"ReplaceFirstLine({BUPA_HEADER!r})")]
    if name == "uci_heart_cleveland":
        # The same 303 lines as heart_uci's processed.cleveland.data (verified byte for byte), with a header.
        base = f"{RAW}/peter-biz/AI-Project-1/83b4c0623db63e2247ecd8e25d43c6a41e640f6d/heart%2Bdisease"
        return [("Raw", f"{base}/processed.cleveland.data", "processed_cleveland.csv", f"PrependLine({CLEVELAND_HEADER!r})")]
    if name == "uci_voting":
        base = f"{RAW}/gowriks12/Voting_data_analysis/3000a5af0fab350cf6b0c5e5cef005b9f5240f2e"
        return [("Raw", f"{base}/house-votes-84.data", "house-votes-84.csv", f"ReplaceFirstLine({VOTING_HEADER!r})")]
    if name == "boostsrl_imdb":
        return [("Zip", f"{SRLEARN}/Datasets/IMDB/IMDB.zip", "female_gender_single_split/", "None"),
                ("Zip", f"{SRLEARN}/Datasets/IMDB/imdb_workedunder.zip", "workedunder_5fold/", "None")]
    if name in ("boostsrl_cora", "boostsrl_uwcse", "boostsrl_webkb"):
        short = name.split("_")[1]
        out = []
        for f in files:
            if f.startswith("boostsrl_misc_single_split/"):
                continue
            if f == "UPSTREAM_README.md":
                out.append(("Raw", f"{SRLEARN}/srlearn/{short}/README.md", f, "None"))
            else:
                out.append(("Raw", f"{SRLEARN}/srlearn/{short}/{short}/{f}", f, "None"))
        return out
    return []


def recorded(md):
    out = []
    for line in md.splitlines():
        t = line.strip()
        if not t.startswith("|"):
            continue
        cells = [c.strip().strip("`").strip() for c in t.strip("|").split("|")]
        if not cells or not cells[0]:
            continue
        s = next((c for c in cells[1:] if re.fullmatch(r"[0-9a-fA-F]{64}", c)), None)
        if s:
            out.append((cells[0], s.lower()))
    return out


def rs(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


print("// @generated by crates/srl-data/tools/gen_registry.py from the data directory's SOURCE.md files.")
print("// Do not edit by hand: regenerate.")
print()
print("use crate::registry::{Dataset, FileSum, Source, SourceKind, Transform};")
print()
print("/// Every data set the experiments use.")
print("pub static DATASETS: &[Dataset] = &[")
for name in USED_BY:
    md_path = os.path.join(ROOT, name, "SOURCE.md")
    md = open(md_path).read() if os.path.exists(md_path) else ""
    files = recorded(md)
    print("    Dataset {")
    print(f"        name: {rs(name)},")
    print(f"        used_by: {rs(USED_BY[name])},")
    print("        files: &[")
    for f, s in files:
        plain = "None"
        plain_size = "None"
        p = os.path.join(ROOT, name, f)
        if not os.path.exists(p):
            sys.exit(f"{p}: listed in its SOURCE.md but absent; the registry needs its size")
        if f.endswith(".gz"):
            data = gzip.open(p).read()
            plain = "Some(" + rs(hashlib.sha256(data).hexdigest()) + ")"
            plain_size = f"Some({len(data)})"
        size = os.path.getsize(p)
        print(f"            FileSum {{ path: {rs(f)}, sha256: {rs(s)}, plain_sha256: {plain}, size: {size}, plain_size: {plain_size} }},")
    print("        ],")
    print("        sources: &[")
    for kind, url, dest, tr in sources(name, [f for f, _ in files]):
        for t in ("PrependLine(", "ReplaceFirstLine("):
            if tr.startswith(t):
                tr = t + rs(eval(tr[len(t):-1])) + ")"
        print(f"            Source {{ kind: SourceKind::{kind}, url: {rs(url)}, dest: {rs(dest)}, transform: Transform::{tr} }},")
    print("        ],")
    print("    },")
print("];")
