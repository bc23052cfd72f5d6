"""PyTorch Geometric reference runs on the saved sparse-label splits.

Run by sparse_reference.py with /work/targets/pyg-venv/bin/python:

    pyg_side.py DATA_DIR SPLIT_DIR OUT_JSON N_SPLITS N_INITS

DATA_DIR/{cora,citeseer}_lcc.npz hold the LCC subgraph (X raw counts as CSR parts, y,
undirected edge list); SPLIT_DIR/{ds}_split{s}.npz hold train / val / test (LCC-local
indices). Writes a JSON list of per-run records.

Models (Kipf & Welling's setting, as PyG's examples/gcn.py):
  GCN:   dropout(x) -> GCNConv(d, h) -> ReLU -> dropout -> GCNConv(h, k); h = 16
  APPNP: dropout(x) -> Linear(d, 64) -> ReLU -> dropout -> Linear(64, k) -> APPNP(K=10, alpha=0.1)
Adam lr 0.01, weight decay on the first layer's parameters only (GCN 5e-4, APPNP 5e-3,
srl's defaults; as a param group, like examples/gcn.py), row-normalised features
(NormalizeFeatures), at most 200 epochs, early stopping when the validation loss has not
reached a new minimum for 10 epochs (srl's patience and rule), test accuracy of the
epoch with the lowest validation loss.
"""
import json
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch_geometric.nn import APPNP, GCNConv

torch.set_num_threads(1)


class GCN(torch.nn.Module):
    def __init__(self, d, h, k, p):
        super().__init__()
        self.conv1 = GCNConv(d, h, cached=True, normalize=True)
        self.conv2 = GCNConv(h, k, cached=True, normalize=True)
        self.p = p

    def first(self):
        return self.conv1.parameters()

    def rest(self):
        return self.conv2.parameters()

    def forward(self, x, ei):
        x = F.dropout(x, p=self.p, training=self.training)
        x = F.relu(self.conv1(x, ei))
        x = F.dropout(x, p=self.p, training=self.training)
        return self.conv2(x, ei)


class APPNPNet(torch.nn.Module):
    def __init__(self, d, h, k, p, K, alpha):
        super().__init__()
        self.lin1 = torch.nn.Linear(d, h)
        self.lin2 = torch.nn.Linear(h, k)
        self.prop = APPNP(K, alpha, cached=True)
        self.p = p
        # Glorot uniform weights and zero biases, as srl (and Klicpera et al.'s TF code).
        for lin in (self.lin1, self.lin2):
            torch.nn.init.xavier_uniform_(lin.weight)
            torch.nn.init.zeros_(lin.bias)

    def first(self):
        return self.lin1.parameters()

    def rest(self):
        return self.lin2.parameters()

    def forward(self, x, ei):
        x = F.dropout(x, p=self.p, training=self.training)
        x = F.relu(self.lin1(x))
        x = F.dropout(x, p=self.p, training=self.training)
        return self.prop(self.lin2(x), ei)


def train_one(model, wd, x, ei, y, tr, va, te, lr=0.01, max_epochs=200, patience=10):
    opt = torch.optim.Adam([dict(params=model.first(), weight_decay=wd),
                            dict(params=model.rest(), weight_decay=0.0)], lr=lr)
    best_val, best_test, best_epoch, since, epochs = float("inf"), None, 0, 0, 0
    for epoch in range(1, max_epochs + 1):
        model.train()
        opt.zero_grad()
        out = model(x, ei)
        loss = F.cross_entropy(out[tr], y[tr])
        loss.backward()
        opt.step()
        model.eval()
        with torch.no_grad():
            out = model(x, ei)
            vl = F.cross_entropy(out[va], y[va]).item()
            pred = out.argmax(1)
        epochs = epoch
        if vl < best_val:
            best_val, best_epoch, since = vl, epoch, 0
            best_test = (pred[te] == y[te]).float().mean().item()
        else:
            since += 1
            if since >= patience:
                break
    return best_test, epochs, best_epoch, best_val


def main():
    data_dir, split_dir, out_json = sys.argv[1:4]
    n_splits, n_inits = int(sys.argv[4]), int(sys.argv[5])
    recs = []
    for ds in ("cora", "citeseer"):
        z = np.load(f"{data_dir}/{ds}_lcc.npz")
        n, d = int(z["n"]), int(z["d"])
        X = np.zeros((n, d), dtype=np.float32)
        indptr, indices, vals = z["indptr"], z["indices"], z["data"]
        for i in range(n):
            X[i, indices[indptr[i]:indptr[i + 1]]] = vals[indptr[i]:indptr[i + 1]]
        s = X.sum(1, keepdims=True)
        X = X / np.where(s > 0, s, 1.0)  # NormalizeFeatures (L1 rows)
        x = torch.from_numpy(X)
        y = torch.from_numpy(z["y"].astype(np.int64))
        e = z["edges"].astype(np.int64)
        ei = torch.from_numpy(np.concatenate([e, e[:, ::-1]], 0).T.copy())
        k = int(y.max()) + 1
        for sidx in range(n_splits):
            sp = np.load(f"{split_dir}/{ds}_split{sidx}.npz")
            tr, va, te = (torch.from_numpy(sp[a].astype(np.int64)) for a in ("train", "val", "test"))
            for init in range(n_inits):
                for method in ("GCN", "APPNP"):
                    torch.manual_seed(1000 * sidx + init)
                    if method == "GCN":
                        model, wd = GCN(d, 16, k, 0.5), 5e-4
                    else:
                        model, wd = APPNPNet(d, 64, k, 0.5, 10, 0.1), 5e-3
                    t0 = time.perf_counter()
                    acc, epochs, best_epoch, best_val = train_one(model, wd, x, ei, y, tr, va, te)
                    recs.append(dict(dataset=ds, split=sidx, init=init, impl="pyg", method=method,
                                     acc=acc, epochs=epochs, best_epoch=best_epoch,
                                     best_val_loss=best_val, seconds=time.perf_counter() - t0))
                    print(ds, sidx, init, method, f"{acc:.4f}", epochs, flush=True)
    with open(out_json, "w") as f:
        json.dump(recs, f)


if __name__ == "__main__":
    main()
