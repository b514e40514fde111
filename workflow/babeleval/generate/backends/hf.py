"""Hugging Face transformers backend: batched generation and shared-prefix log-likelihood scoring.

Log-likelihood multiple choice runs one forward pass over the unique tokens of a batch: each row is a
token tree holding an item's context and then each of its choices (items whose contexts share a prefix,
such as two questions on one passage or a common few-shot prefix, share a row), a 4D attention mask
lets every token see only its ancestors, and logits are computed only where a scored token is
predicted. Single-token choices (letters) thus cost one pass over the context and one logit row.
Short trees are packed into the room long rows leave, so a batch runs almost no padding (on a CPU, into
rows at most ``HFBackend.CPU_PACK_WIDTH`` wide, and a pass holds rows of like width, whose attention runs by
query blocks: ``query_blocks``; there the linear layers run through oneDNN: ``onednn_linear``). With
``torch_compile`` the passes run the model through torch.compile.
Prompt encoding, chat rendering and stop-sequence cutting are shared with the vLLM backend (local_text).
"""

from __future__ import annotations

import bisect
from contextlib import nullcontext
import dataclasses
from dataclasses import dataclass, field
import logging
import sys
from typing import Any, Iterator, Sequence

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, LogitsProcessorList

from ...core import cpu_threads
from ...core.errors import BackendError
from .base import (Decoding, GenerationRequest, GenerationResult, LoglikelihoodRequest,
                   LoglikelihoodResult, keep_last)
from .answer_slot import AnswerSlotProcessor
from .config import HFConfig
from .local_text import LocalText, cut_at_stop
from . import onednn_linear, query_blocks

log = logging.getLogger(__name__)

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16, "auto": "auto"}


def pick_device(name: str) -> str:
    if name != "auto":
        return name
    if torch.cuda.is_available():
        return "cuda"
    if torch.backends.mps.is_available():
        return "mps"
    return "cpu"


@dataclass
class _Tree:
    """One row of a log-likelihood pass: a token tree (see ``HFBackend._tree``)."""
    items: int
    tokens: list[int] = field(default_factory=list)
    parents: list[int] = field(default_factory=list)   # -1 for a root
    depths: list[int] = field(default_factory=list)    # the token's position id
    targets: list[tuple[int, int, list[int], list[int]]] = field(default_factory=list)  # item, choice, nodes, tokens

    def append(self, other: "_Tree") -> None:
        """Put ``other`` after this tree's tokens in the same row: its nodes and parents shift by this length."""
        shift = len(self.tokens)
        self.items += other.items
        self.tokens += other.tokens
        self.parents += [p + shift if p >= 0 else -1 for p in other.parents]
        self.depths += other.depths
        self.targets += [(item, k, [n + shift for n in nodes], cont) for item, k, nodes, cont in other.targets]


class HFBackend(LocalText):
    def __init__(self, config: HFConfig, model_path: str):
        self.device = pick_device(config.device)
        self.batch_size = config.batch_size
        if self.device.startswith("cpu") and cpu_threads.granted():
            torch.set_num_threads(cpu_threads.granted())  # the job's threads, no more (core.cpu_threads)
        revision, trust = config.revision, config.trust_remote_code
        tokenizer = AutoTokenizer.from_pretrained(model_path, revision=revision, trust_remote_code=trust)
        self.model = AutoModelForCausalLM.from_pretrained(
            model_path, revision=revision, trust_remote_code=trust, dtype=DTYPES[config.dtype],
        ).to(self.device)
        self.model.eval()
        # The module the log-likelihood passes call: with torch_compile, the model through torch.compile with
        # dynamic shapes (passes of other rows and widths reuse a compiled graph; the first passes compile), which fuses
        # the elementwise kernels (norms, rotary embeddings, activations) that eager mode runs one by one.
        # Generation keeps the eager model (its one-token steps would recompile). Off by default: on an H100 the
        # passes of an 8B model ran 1.23x faster, after compiling for about 170 s (bench/RESULTS.md, section 4).
        self.scoring_model = torch.compile(self.model, dynamic=True) if config.torch_compile else self.model
        # On a CPU, unless compiled (torch's compiler picks its own kernels): the passes' attention runs by query
        # blocks (query_blocks: 44% fewer pairs in the CPU benchmark), and every linear layer through oneDNN
        # (onednn_linear: passes and generation 5-9% faster there)
        cpu_eager = self.device.startswith("cpu") and not config.torch_compile
        self.by_query_blocks = cpu_eager and query_blocks.applies_to(self.model)
        self.onednn_linears = onednn_linear.route(self.model) if cpu_eager else 0
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token
        self.pad_id = tokenizer.pad_token_id
        self.end_ids = end_of_text_ids(tokenizer, self.model.generation_config)
        self.init_text(tokenizer, config, model_path)
        self.max_length = config.max_length or getattr(self.model.config, "max_position_embeddings", None) or 2048
        log.info("loaded %s on %s (dtype %s, max_length %d, %d linear layers through oneDNN, %d threads)", model_path,
                 self.device, self.model.dtype, self.max_length, self.onednn_linears, torch.get_num_threads())

    # -- log-likelihood ---------------------------------------------------------------------------

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[LoglikelihoodResult]:
        if self.chat_template is None:
            return self._loglikelihood(requests)
        rendered = [self.render_chat(r.messages, r.context) for r in requests]
        results = self._loglikelihood([dataclasses.replace(r, context=text) for r, text in zip(requests, rendered)])
        return [dataclasses.replace(res, rendered_prompt=text) for res, text in zip(results, rendered)]

    @torch.inference_mode()
    def _loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[LoglikelihoodResult]:
        encoded, cuts = [], []
        tokens = self.encode_requests([(r.context, r.continuations, r.encoding) for r in requests])
        for request, (context_ids, conts) in zip(requests, tokens):
            if not context_ids:  # a tokenizer that encodes a non-empty context to nothing
                context_ids = [self.tokenizer.eos_token_id]
            if any(not cont for cont in conts):
                raise BackendError(f"a continuation encodes to no tokens after context {request.context[-40:]!r}")
            kept, cut, question_cut = keep_last(context_ids, self.max_length - max(len(c) for c in conts),
                                                lambda: self.question_tokens(request.query))
            encoded.append((kept, conts))
            cuts.append((cut, question_cut))
        logprobs = [[0.0] * len(conts) for _, conts in encoded]
        greedy = [[False] * len(conts) for _, conts in encoded]
        queued: list[_Pass] = []
        with self._pass_context():
            for batch in self._passes(encoded):
                queued.append(self._packed_logprobs(batch))
                if len(queued) == 2:  # the next pass is queued before this one's results are read: no idle device
                    queued.pop(0).read_into(logprobs, greedy)
        for done in queued:
            done.read_into(logprobs, greedy)
        return [LoglikelihoodResult(lps, gs, [len(c) for c in conts], len(ctx), truncated_tokens=cut,
                                    question_cut=question_cut)
                for (ctx, conts), lps, gs, (cut, question_cut) in zip(encoded, logprobs, greedy, cuts)]

    # Items whose contexts share at least this fraction of their tokens (a passage asked about twice,
    # a few-shot prefix) are packed into one row, up to this many items a row.
    SHARED_FRACTION = 0.25
    ITEMS_PER_ROW = 8
    # On a CPU, where a pass costs its positions and its rows' widths squared (attention), and a bigger pass
    # keeps no device busier: packed rows are at most CPU_PACK_WIDTH wide, and a pass ends before a row
    # narrower than CPU_NARROWEST_IN_PASS of its first (widest), so no row of it is more than a fifth padding.
    # Both measured on the CPU benchmark (bench/RESULTS.md): rows as wide as the longest tree and passes of a
    # fixed item count (an eighth of their positions padding) made scoring text choices about a fifth slower;
    # widths 128, 256 and 512 measured alike. On a GPU, rows are as wide as the longest tree, as measured there.
    CPU_PACK_WIDTH = 256
    CPU_NARROWEST_IN_PASS = 0.8

    def _passes(self, encoded: list[tuple[list[int], list[list[int]]]]) -> list[list["_Tree"]]:
        """The forward passes of a log-likelihood call: each a list of rows (token trees), widest first."""
        trees = sorted((self._tree(row, encoded) for row in self._rows(encoded)), key=lambda t: -len(t.tokens))
        on_cpu = self.device.startswith("cpu")
        if self._attn_takes_4d_mask():
            trees = _pack(trees, self.CPU_PACK_WIDTH if on_cpu else None)
        return list(_batches(trees, self.batch_size, self.CPU_NARROWEST_IN_PASS if on_cpu else 0.0))

    def _rows(self, encoded: list[tuple[list[int], list[list[int]]]]) -> list[list[tuple[int, int | None]]]:
        """Plan the rows of the forward passes: each row lists the (item, choice) sequences it runs.

        With a 4D attention mask, a row holds all choices (None) of one item, or of several items whose
        contexts share a prefix. Without one (e.g. flash-attention), a row is one context and one choice,
        as lm-eval runs them, except that single-token choices need only their context.
        """
        if not self._attn_takes_4d_mask():
            rows = []
            for i, (_, conts) in enumerate(encoded):
                if all(len(c) == 1 for c in conts):
                    rows.append([(i, None)])
                else:
                    rows.extend([(i, k)] for k in range(len(conts)))
            return rows
        rows = []
        for i in sorted(range(len(encoded)), key=lambda i: encoded[i][0]):  # shared prefixes become neighbours
            if rows and len(rows[-1]) < self.ITEMS_PER_ROW:
                a, b = encoded[rows[-1][0][0]][0], encoded[i][0]
                shared = next((j for j, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
                if shared >= self.SHARED_FRACTION * max(len(a), len(b)):
                    rows[-1].append((i, None))
                    continue
            rows.append([(i, None)])
        return rows

    @staticmethod
    def _tree(row: list[tuple[int, int | None]], encoded: list[tuple[list[int], list[list[int]]]]) -> "_Tree":
        """The token tree of a row: contexts, then each choice after its context, common prefixes stored once.

        A choice's last token is left out: it predicts nothing that is scored.
        """
        tree = _Tree(items=len(row))
        children: dict[tuple[int, int], int] = {}

        def walk(node: int, seq: list[int]) -> list[int]:
            path = []
            for tok in seq:
                nxt = children.get((node, tok))
                if nxt is None:
                    nxt = children[(node, tok)] = len(tree.tokens)
                    tree.tokens.append(tok)
                    tree.parents.append(node)
                    tree.depths.append(tree.depths[node] + 1 if node >= 0 else 0)
                path.append(nxt)
                node = nxt
            return path

        for item, only in row:
            ctx, conts = encoded[item]
            end = walk(-1, ctx)[-1]
            for k, cont in enumerate(conts):
                if only is None or k == only:
                    tree.targets.append((item, k, [end, *walk(end, cont[:-1])], cont))
        return tree

    def _packed_logprobs(self, trees: list["_Tree"]) -> "_Pass":
        """One forward pass over the unique tokens of a batch of token trees: the shared-prefix scorer.

        A 4D attention mask lets each token see only its ancestors in its tree, and a token's position is
        its depth, so every choice is scored exactly as if it followed its context alone, while a passage
        two questions share, or the first words two choices share, run once. Logits are computed only at
        the positions that predict a scored token. The pass is queued on the device and not waited for:
        ``_Pass.read_into`` waits for it and writes each choice's log-prob and is-greedy.
        """
        if self.scoring_model is not self.model and len(trees) == 1:
            # a compiled pass of one row would specialize a new graph to one row (torch's 0/1 specialization):
            # an empty row (padding only) costs its width in positions, a recompile over a minute
            trees = [*trees, _Tree(items=0)]
        width = max(len(t.tokens) for t in trees)
        n_rows = len(trees)
        ids = torch.tensor([t.tokens + [self.pad_id] * (width - len(t.tokens)) for t in trees])
        pos = torch.tensor([t.depths + [0] * (width - len(t.depths)) for t in trees])
        scored = [(r * width + node, token) for r, t in enumerate(trees) for _, _, nodes, cont in t.targets
                  for node, token in zip(nodes, cont)]
        flat = [position for position, _ in scored]
        keep = torch.zeros(n_rows * width, dtype=torch.bool)
        keep[flat] = True
        index = (keep.cumsum(0) - 1)[flat]  # the scored positions' rows among the kept
        keep = keep.view(n_rows, width)
        if self._attn_takes_4d_mask():
            allowed = torch.zeros((n_rows, width, width), dtype=torch.bool)
            tril = torch.ones((width, width), dtype=torch.bool).tril()
            for r, tree in enumerate(trees):
                _fill_tree_mask(allowed[r], tree.parents, len(tree.tokens), width, tril)
            # the additive mask is made on the device: half the bytes to copy, no fill on the CPU
            dtype = self.model.dtype
            mask = torch.zeros((n_rows, 1, width, width), dtype=dtype, device=self.device)
            mask.masked_fill_(~self._to_device(allowed)[:, None], torch.finfo(dtype).min)
        else:  # one chain a row: the plain causal mask with padding
            mask = self._to_device(torch.tensor([[1] * len(t.tokens) + [0] * (width - len(t.tokens)) for t in trees]))
        ids, pos, keep = self._to_device(ids), self._to_device(pos), self._to_device(keep)
        if self._takes_2d_logits_to_keep():
            logits = self.scoring_model(input_ids=ids, attention_mask=mask, position_ids=pos, use_cache=False,
                                        logits_to_keep=keep).logits
        else:
            logits = self.scoring_model(input_ids=ids, attention_mask=mask, position_ids=pos,
                                        use_cache=False).logits[keep]
        logprobs = torch.log_softmax(logits.float(), dim=-1)  # one row per kept position, row-major
        index_t = self._to_device(index)
        wanted_t = self._to_device(torch.tensor([token for _, token in scored]))
        owners, slots = [], []
        for tree in trees:
            for item, k, _, cont in tree.targets:
                owners.extend([len(slots)] * len(cont))
                slots.append((item, k))
        return _Pass(logprobs[index_t, wanted_t], logprobs.argmax(-1)[index_t] == wanted_t, owners, slots)

    def _pass_context(self) -> Any:
        """What the log-likelihood passes run in: on a CPU, attention by query blocks; with torch_compile, the
        boolean mask of kept positions (transformers' ``slice_logits_to_keep``), whose output size depends on the
        data, traced into the model's one graph: otherwise the graph breaks there and its three parts compile one
        by one (on the CPU benchmark's model, 34.6 s to a first result against 24.4 s traced, the passes after
        it alike)."""
        if self.by_query_blocks:
            return query_blocks.query_blocks(self.model)
        if self.scoring_model is not self.model:
            return torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True)
        return nullcontext()

    def _to_device(self, tensor: "torch.Tensor") -> "torch.Tensor":
        """A CPU tensor on the model's device. To a GPU from pinned memory without waiting: a plain copy would
        wait for the passes queued before it, and the next batch could not be prepared while one runs."""
        if self.device.startswith("cuda"):
            return tensor.pin_memory().to(self.device, non_blocking=True)
        return tensor.to(self.device)

    def _attn_takes_4d_mask(self) -> bool:
        return getattr(self.model.config, "_attn_implementation", "sdpa") in ("sdpa", "eager", query_blocks.NAME)

    def _takes_2d_logits_to_keep(self) -> bool:
        """transformers' own models slice logits with ``slice_logits_to_keep``, which takes a (batch, seq) mask."""
        return getattr(sys.modules.get(type(self.model).__module__), "slice_logits_to_keep", None) is not None

    # -- generation -------------------------------------------------------------------------------

    def generate(self, requests: Sequence[GenerationRequest], decoding: Decoding) -> list[GenerationResult]:
        if self.chat_template is None:
            return self._generate(requests, decoding)
        rendered = [self.render_chat(r.messages, r.prompt) for r in requests]
        results = self._generate([dataclasses.replace(r, prompt=text) for r, text in zip(requests, rendered)], decoding)
        return [dataclasses.replace(res, rendered_prompt=text) for res, text in zip(results, rendered)]

    @torch.inference_mode()
    def _generate(self, requests: Sequence[GenerationRequest], decoding: Decoding) -> list[GenerationResult]:
        requests = self.limited(requests)
        encoded = [self.encode(r.prompt, r.encoding) for r in requests]
        order = sorted(range(len(requests)), key=lambda i: -len(encoded[i]))
        results: list[GenerationResult | None] = [None] * len(requests)
        for batch_number, start in enumerate(range(0, len(order), self.batch_size)):
            batch = order[start:start + self.batch_size]
            torch.manual_seed(decoding.seed + batch_number)
            for index, result in zip(batch, self._generate_batch([requests[i] for i in batch],
                                                                 [encoded[i] for i in batch], decoding)):
                results[index] = result
        return results  # type: ignore[return-value]

    def _generate_batch(self, requests: list[GenerationRequest], encoded: list[list[int]],
                        decoding: Decoding) -> list[GenerationResult]:
        max_new = max(r.max_new_tokens for r in requests)
        kept = [keep_last(ids, self.max_length - max_new, lambda r=r: self.question_tokens(r.query))
                for ids, r in zip(encoded, requests)]
        encoded = [ids for ids, _, _ in kept]
        width = max(map(len, encoded))
        ids = torch.full((len(encoded), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(encoded), width), dtype=torch.long)
        for row, prompt in enumerate(encoded):
            ids[row, width - len(prompt):] = torch.tensor(prompt)
            mask[row, width - len(prompt):] = 1
        stops = sorted({s for r in requests for s in r.stop})
        kwargs: dict[str, Any] = {"do_sample": decoding.do_sample}
        if decoding.do_sample:
            for key in ("temperature", "top_p", "top_k"):
                if getattr(decoding, key) is not None:
                    kwargs[key] = getattr(decoding, key)
        if decoding.repetition_penalty is not None:
            kwargs["repetition_penalty"] = decoding.repetition_penalty
        if stops:
            kwargs.update(stop_strings=stops, tokenizer=self.tokenizer)
        if any(r.answer_slot is not None for r in requests):  # constrained answers (prompts.answer_slot)
            kwargs["logits_processor"] = LogitsProcessorList([AnswerSlotProcessor(
                [r.answer_slot for r in requests], self.tokenizer, width, self.tokenizer.eos_token_id)])
        output = self.model.generate(
            input_ids=ids.to(self.device), attention_mask=mask.to(self.device), max_new_tokens=max_new,
            pad_token_id=self.pad_id, eos_token_id=list(self.end_ids), **kwargs,
        )
        results = []
        for row, request in enumerate(requests):
            new, ended = self._generated(output[row, width:].tolist()[: request.max_new_tokens])
            text, stopped = cut_at_stop(self.tokenizer.decode(new, skip_special_tokens=True), request.stop)
            finish = "stop" if stopped or ended else "length"
            if finish == "length":
                text = without_partial_character(text)
            results.append(GenerationResult(text, len(encoded[row]), len(new), finish, truncated_tokens=kept[row][1],
                                            question_cut=kept[row][2]))
        return results

    def _generated(self, new: list[int]) -> tuple[list[int], bool]:
        """A row's generated tokens up to its end-of-text token (which is not counted), and whether it met one.

        A row that finished before the batch's longest (a stop string) is filled with padding after its last
        token: the padding is no generated token, and is not counted.
        """
        ends = [k for k, token in enumerate(new) if token in self.end_ids]
        if ends:
            return new[: ends[0]], True
        while new and new[-1] == self.pad_id:
            new = new[:-1]
        return new, False


def without_partial_character(text: str) -> str:
    """A reply cut at the length limit inside a character (byte-level tokens: a Devanagari or kana character is
    several tokens) decodes to U+FFFD at its end: the model never finished that character, so it is dropped."""
    return text.rstrip("\ufffd")


def end_of_text_ids(tokenizer: Any, generation_config: Any) -> tuple[int, ...]:
    """The tokens that end a generation: the tokenizer's EOS and those the model's generation config names (a chat
    model's end of turn, such as ``<|im_end|>`` or ``<|eot_id|>``, where it differs from the EOS)."""
    configured = getattr(generation_config, "eos_token_id", None)
    configured = configured if isinstance(configured, (list, tuple)) else [configured]
    return tuple(dict.fromkeys(t for t in (tokenizer.eos_token_id, *configured) if t is not None))


@dataclass
class _Pass:
    """A queued log-likelihood pass: each scored token's log-prob and whether it was the argmax, on the device,
    with the choice each belongs to (``owners``, an index into ``slots``: (item, choice))."""
    values: "torch.Tensor"
    hits: "torch.Tensor"
    owners: list[int]
    slots: list[tuple[int, int]]

    def read_into(self, logprobs: list[list[float]], greedy: list[list[bool]]) -> None:
        """Wait for the pass and write each choice's summed log-prob and is-greedy into the items' lists."""
        sums, all_hit = [0.0] * len(self.slots), [True] * len(self.slots)
        for owner, value, hit in zip(self.owners, self.values.tolist(), self.hits.tolist()):
            sums[owner] += value
            all_hit[owner] = all_hit[owner] and hit
        for (item, k), lp, g in zip(self.slots, sums, all_hit):
            logprobs[item][k], greedy[item][k] = lp, g


def _batches(trees: list[_Tree], items: int, narrowest: float = 0.0) -> Iterator[list[_Tree]]:
    """Consecutive rows (widest first) holding about ``items`` items a pass (a row holds one or more items);
    a row narrower than ``narrowest`` times the pass's first row starts the next pass."""
    batch: list[_Tree] = []
    held = 0
    for tree in trees:
        if batch and len(tree.tokens) < narrowest * len(batch[0].tokens):
            yield batch
            batch, held = [], 0
        batch.append(tree)
        held += tree.items
        if held >= items:
            yield batch
            batch, held = [], 0
    if batch:
        yield batch


def _pack(trees: list[_Tree], width: int | None = None) -> list[_Tree]:
    """Trees sorted longest first, packed into rows no wider than ``width`` (default: the longest tree) by best
    fit, each tree into the row with the least room that holds it; a tree longer than ``width`` is a row of its
    own. The rows come out widest first, so a batch of consecutive rows carries little padding.

    Without packing, a batch's rows are padded to its longest, and with contexts of very different lengths
    (Belebele's passages run from about 200 to 1,000 characters) padding was half of the positions a
    256-item batch ran. Trees in one row never see each other (each token attends only to its ancestors)
    and positions restart at each root, so packing changes no score, only how many positions run.
    """
    if not trees:
        return []
    width = width or len(trees[0].tokens)
    rows: list[_Tree] = []
    room: list[tuple[int, int]] = []  # (room left, row), sorted
    for tree in trees:
        at = bisect.bisect_left(room, (len(tree.tokens), -1))
        if at == len(room):
            rows.append(_Tree(items=0))
            left, row = max(width, len(tree.tokens)), len(rows) - 1
        else:
            left, row = room.pop(at)
        rows[row].append(tree)
        if left - len(tree.tokens) > 0:
            bisect.insort(room, (left - len(tree.tokens), row))
    return sorted(rows, key=lambda r: -len(r.tokens))


def _fill_tree_mask(rows_mask: "torch.Tensor", parents: list[int], n: int, width: int, tril: "torch.Tensor") -> None:
    """One row of the packed scorer's attention: each of a tree's ``n`` tokens sees its ancestors and itself."""
    start = 0  # a run of nodes each the child of the one before is a causal block: copy it at once
    for i in range(1, n + 1):
        if i == n or parents[i] != i - 1:
            anchor = parents[start]
            if anchor >= 0:
                rows_mask[start:i] = rows_mask[anchor]
            rows_mask[start:i, start:i] = tril[: i - start, : i - start]
            start = i
    padding = torch.arange(n, width)
    rows_mask[padding, padding] = True  # padding sees itself only: no empty softmax rows
