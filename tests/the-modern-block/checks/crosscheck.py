"""Cross-check the-modern-block's reference against an independent implementation (`make
crosscheck`; not part of `make test`: it needs torch and transformers, e.g. in a venv of their own,
PYTHON_XCHECK=that venv's python).

1. modern_block against transformers' LlamaDecoderLayer with the same weights and RoPE switched off
   (cos = 1, sin = 0), in float64, with the causal mask given explicitly (sdpa attention: the eager
   one takes its softmax in float32): the max absolute error over
   several shapes (multi-head, grouped-query, multi-query), with and without gains. transformers'
   RMSNorm computes in float32 whatever the dtype (LlamaRMSNorm), so as shipped the errors are
   float32's, about 1e-6; with that one cast removed (rmsnorm_in_float64, the same formula) they are
   float64's, about 1e-15. A control with W_1 and W_3 swapped on our side must differ (by about 1),
   so the comparison can fail.
2. count_model against the parameters of LlamaForCausalLM models built from LlamaConfig on the meta
   device (no memory): every part and the total, tied and untied, Llama 3 8B included. The counts
   must be equal.

Prints the figures and exits 1 when an error is above TOLERANCE or a count differs.
"""

import sys
from pathlib import Path

import numpy as np

try:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM
    from transformers.models.llama import modeling_llama
    from transformers.models.llama.modeling_llama import LlamaDecoderLayer
except ImportError as err:
    sys.exit(
        f"crosscheck.py needs torch and transformers ({err}): run it with a Python that has them, "
        "e.g. "
        "make crosscheck PYTHON_XCHECK=/path/to/venv/bin/python"
    )

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "solutions" / "the-modern-block"))
from model_params import count_model  # noqa: E402
from modern_block import modern_block  # noqa: E402

# transformers' RMSNorm rounds to float32 (about 6e-8 relative); anything wrong is far above
TOLERANCE = 1e-5
TOLERANCE_64 = 1e-12  # with RMSNorm kept in float64 (rmsnorm_in_float64): float64 rounding only


def rmsnorm_in_float64(self, hidden_states):
    """LlamaRMSNorm.forward without its cast to float32 (the same formula), for a float64-only
    comparison."""
    variance = hidden_states.pow(2).mean(-1, keepdim=True)
    return self.weight * (hidden_states * torch.rsqrt(variance + self.variance_epsilon))


def config(d, n_heads, n_kv_heads, d_ff, n_layers=1, vocab=1000, tied=False):
    cfg = LlamaConfig(
        hidden_size=d,
        num_attention_heads=n_heads,
        num_key_value_heads=n_kv_heads,
        intermediate_size=d_ff,
        num_hidden_layers=n_layers,
        vocab_size=vocab,
        rms_norm_eps=1e-6,
        tie_word_embeddings=tied,
        attention_bias=False,
        mlp_bias=False,
        head_dim=d // n_heads,
    )
    cfg._attn_implementation = (
        "sdpa"  # eager_attention_forward takes its softmax in float32; sdpa keeps float64
    )
    return cfg


def block_error(n, d, n_heads, n_kv_heads, d_ff, gains, seed, swap=False):
    """Max |modern_block - LlamaDecoderLayer| on one random input (swap: W_1 and W_3 swapped on our
    side, a control that must fail)."""
    rng = np.random.default_rng(seed)
    kv = n_kv_heads * (d // n_heads)
    p = {
        name: rng.normal(scale=1 / np.sqrt(d), size=s)
        for name, s in [
            ("W_q", (d, d)),
            ("W_k", (d, kv)),
            ("W_v", (d, kv)),
            ("W_o", (d, d)),
            ("W_1", (d, d_ff)),
            ("W_3", (d, d_ff)),
        ]
    }
    p["W_2"] = rng.normal(scale=1 / np.sqrt(d_ff), size=(d_ff, d))
    if gains:
        p["gain_1"], p["gain_2"] = 1 + 0.5 * rng.normal(size=d), 1 + 0.5 * rng.normal(size=d)
    x = rng.normal(size=(n, d))

    layer = (
        LlamaDecoderLayer(config(d, n_heads, n_kv_heads, d_ff), layer_idx=0)
        .to(torch.float64)
        .eval()
    )
    t = lambda a: torch.tensor(a, dtype=torch.float64)  # noqa: E731
    with torch.no_grad():  # torch's Linear stores [out, in]: the course's W is its weight.T
        layer.self_attn.q_proj.weight.copy_(t(p["W_q"].T))
        layer.self_attn.k_proj.weight.copy_(t(p["W_k"].T))
        layer.self_attn.v_proj.weight.copy_(t(p["W_v"].T))
        layer.self_attn.o_proj.weight.copy_(t(p["W_o"].T))
        layer.mlp.gate_proj.weight.copy_(t(p["W_1"].T))  # SiLU's branch
        layer.mlp.up_proj.weight.copy_(t(p["W_3"].T))
        layer.mlp.down_proj.weight.copy_(t(p["W_2"].T))
        layer.input_layernorm.weight.copy_(t(p.get("gain_1", np.ones(d))))
        layer.post_attention_layernorm.weight.copy_(t(p.get("gain_2", np.ones(d))))
        d_head = d // n_heads
        rope_off = (
            torch.ones(1, n, d_head, dtype=torch.float64),
            torch.zeros(1, n, d_head, dtype=torch.float64),
        )
        mask = torch.triu(torch.full((n, n), float("-inf"), dtype=torch.float64), 1)[None, None]
        out = layer(
            t(x)[None],
            attention_mask=mask,
            position_embeddings=rope_off,
            position_ids=torch.arange(n)[None],
        )
        theirs = (out[0] if isinstance(out, tuple) else out)[0].numpy()
    ours = modern_block(
        x, {**p, "W_1": p["W_3"], "W_3": p["W_1"]} if swap else p, n_heads, n_kv_heads
    )
    return float(np.abs(ours - theirs).max())


def hf_counts(d, n_heads, n_kv_heads, n_layers, vocab, d_ff, tied):
    """The parts count_model reports, from a LlamaForCausalLM on the meta device."""
    with torch.device("meta"):
        model = LlamaForCausalLM(config(d, n_heads, n_kv_heads, d_ff, n_layers, vocab, tied))
    layer = model.model.layers[0]
    size = lambda m: sum(q.numel() for q in m.parameters())  # noqa: E731
    norm = size(layer.input_layernorm) + size(layer.post_attention_layernorm)
    return {
        "attention": size(layer.self_attn),
        "mlp": size(layer.mlp),
        "norm": norm,
        "block": size(layer),
        "blocks": size(model.model.layers),
        "embedding": size(model.model.embed_tokens),
        "output": 0 if tied else size(model.lm_head),
        "final_norm": size(model.model.norm),
        "total": sum(q.numel() for q in model.parameters()),
    }  # parameters() counts a tied table once


def main() -> int:
    ok = True
    print(
        "modern_block against transformers' LlamaDecoderLayer (RoPE off, float64, same weights), "
        "max |error|:"
    )
    print(
        "  (as shipped: its RMSNorm in float32 | its RMSNorm kept in float64 | control, W_1 and "
        "W_3 swapped)"
    )
    shipped = modeling_llama.LlamaRMSNorm.forward
    for n, d, h, h_kv, d_ff, gains in [
        (5, 8, 2, 1, 21, False),
        (5, 8, 2, 1, 21, True),
        (12, 16, 8, 2, 40, True),
        (9, 16, 4, 4, 48, True),
        (64, 64, 8, 1, 170, True),
        (33, 32, 8, 4, 85, True),
    ]:
        err = block_error(n, d, h, h_kv, d_ff, gains, seed=n * d)
        modeling_llama.LlamaRMSNorm.forward = rmsnorm_in_float64
        try:
            err64 = block_error(n, d, h, h_kv, d_ff, gains, seed=n * d)
            control = block_error(n, d, h, h_kv, d_ff, gains, seed=n * d, swap=True)
        finally:
            modeling_llama.LlamaRMSNorm.forward = shipped
        ok &= err <= TOLERANCE and err64 <= TOLERANCE_64 and control > 1e-3
        print(
            f"  n={n:3d} d={d:3d} heads={h} kv={h_kv} d_ff={d_ff:3d} gains={gains!s:5}  "
            f"{err:.2e} | {err64:.2e} | {control:.2e}"
        )
    print("count_model against LlamaForCausalLM(LlamaConfig(...)) on the meta device:")
    for args in [
        (4096, 32, 8, 32, 128256, 14336, False),
        (4096, 32, 8, 32, 128256, 11008, False),
        (2048, 32, 8, 16, 128256, 8192, True),
        (1536, 12, 4, 28, 151936, 8960, True),
        (768, 12, 12, 12, 50257, 2048, False),
        (96, 4, 2, 3, 1000, 256, False),
    ]:
        *shape, d_ff, tied = args
        ours, theirs = count_model(*shape, d_ff=d_ff, tied=tied), hf_counts(*shape, d_ff, tied)
        same = ours == theirs
        ok &= same
        print(
            f"  {args}: total {ours['total']:,} ours, {theirs['total']:,} transformers"
            + ("  (every part equal)" if same else f"  DIFFERENT: ours {ours}, theirs {theirs}")
        )
    print("cross-check passed" if ok else "cross-check FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
