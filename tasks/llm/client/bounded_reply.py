"""Every reply NKW reads from a server is bounded after decoding, not only on the wire.

httpx inflates a `Content-Encoding: gzip` or `deflate` body with zlib and no output limit: a
reply of 4 MB on the wire that inflates to 4 GiB is held in memory in full before anything can
look at its size. Here the transport hands httpx a body it has already decoded, in pieces of at
most `PIECE_BYTES` out of each decompressor, counts what it hands over and stops with
`ReplyTooLarge` past the client's limit — whatever the encoding, stacked encodings included, and
for a plain body that is declared huge or never ends. Encodings other than gzip and deflate are
refused (`UnsupportedEncoding`), as we never ask for them. Every HTTP client NKW builds for a
server (the LLM client, the build's request queue, embeddings, server probes) is one of these.
"""

from __future__ import annotations

import zlib
from typing import Iterable, Iterator, cast

import httpx

PIECE_BYTES = 64 * 1024  # the most one decompressor step may produce
MAX_ENCODINGS = 2  # layers of Content-Encoding one reply may stack ("gzip, deflate")
ACCEPT_ENCODING = "gzip, deflate"  # only what is decoded here, whatever optional decoders are installed
_GZIP_WBITS = 16 + zlib.MAX_WBITS
_DECODERS = {"gzip": _GZIP_WBITS, "x-gzip": _GZIP_WBITS, "deflate": zlib.MAX_WBITS}


class ReplyTooLarge(httpx.DecodingError):
    """A reply whose decoded body is (or says it will be) larger than the client accepts."""


class UnsupportedEncoding(httpx.DecodingError):
    """A reply in a Content-Encoding this client cannot decode within a bound."""


def _is_zlib_header(data: bytes) -> bool:
    # RFC 1950: compression method 8 and a header checksum divisible by 31. HTTP "deflate" is
    # meant to be zlib-wrapped, but some servers send a raw deflate stream.
    return len(data) >= 2 and data[0] & 0x0F == 8 and (data[0] << 8 | data[1]) % 31 == 0


def inflate(chunks: Iterable[bytes], encoding: str) -> Iterator[bytes]:
    """The decoded bytes of `chunks` in `encoding` (gzip or deflate), never more than PIECE_BYTES at once."""
    wbits = _DECODERS[encoding]
    decoder: zlib._Decompress | None = None
    for chunk in chunks:
        data = chunk
        while data:
            if decoder is None:
                if wbits != _GZIP_WBITS and not _is_zlib_header(data):
                    wbits = -zlib.MAX_WBITS
                decoder = zlib.decompressobj(wbits)
            elif decoder.eof:
                if wbits != _GZIP_WBITS:
                    break  # bytes after the end of a deflate stream: nothing to decode
                decoder = zlib.decompressobj(wbits)  # the next member of a multi-member gzip body
            try:
                piece = decoder.decompress(data, PIECE_BYTES)
            except zlib.error as exc:
                raise httpx.DecodingError(f"the reply's {encoding} body is damaged: {exc}") from None
            if piece:
                yield piece
            data = decoder.unused_data if decoder.eof else decoder.unconsumed_tail
            if not data and len(piece) == PIECE_BYTES and not decoder.eof:
                data = b""  # all input taken; any output still pending comes with the next chunk
    if decoder is not None and not decoder.eof:
        tail = decoder.flush()  # at most one match's worth: the input is all consumed
        if tail:
            yield tail


def content_encodings(headers: httpx.Headers) -> list[str]:
    """The reply's Content-Encoding layers in the order they were applied, identity left out."""
    layers = [value.strip().lower() for value in headers.get_list("content-encoding", split_commas=True)]
    return [layer for layer in layers if layer and layer != "identity"]


class BoundedStream(httpx.SyncByteStream):
    """A reply body decoded layer by layer and cut with ReplyTooLarge past `max_bytes`."""

    def __init__(self, raw: httpx.SyncByteStream, encodings: list[str], max_bytes: int) -> None:
        self._raw, self._encodings, self._max_bytes = raw, encodings, max_bytes

    def __iter__(self) -> Iterator[bytes]:
        pieces: Iterable[bytes] = self._raw
        for encoding in reversed(self._encodings):  # the last one applied is the first undone
            pieces = inflate(pieces, encoding)
        total = 0
        for piece in pieces:
            total += len(piece)
            if total > self._max_bytes:
                raise ReplyTooLarge(too_large(self._max_bytes, self._encodings))
            yield piece

    def close(self) -> None:
        self._raw.close()


def too_large(max_bytes: int, encodings: list[str]) -> str:
    """The one-line reason of a ReplyTooLarge."""
    how = f" once {'+'.join(encodings)}-decoded" if encodings else ""
    return f"the server's reply is larger than {max_bytes} bytes{how}; it was not read further"


class BoundedTransport(httpx.BaseTransport):
    """A transport whose replies reach httpx decoded and bounded (see the module docstring)."""

    def __init__(self, inner: httpx.BaseTransport, max_bytes: int) -> None:
        self._inner, self._max_bytes = inner, max_bytes

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        request.headers["Accept-Encoding"] = ACCEPT_ENCODING
        response = self._inner.handle_request(request)
        encodings = content_encodings(response.headers)
        unknown = sorted({e for e in encodings if e not in _DECODERS})
        problem: httpx.DecodingError | None = None
        if unknown:
            problem = UnsupportedEncoding(f"the server's reply is in an encoding not decoded here: {unknown}")
        elif len(encodings) > MAX_ENCODINGS:
            problem = UnsupportedEncoding(f"the server's reply stacks {len(encodings)} encodings")
        elif not encodings and _declared_length(response.headers) > self._max_bytes:
            problem = ReplyTooLarge(too_large(self._max_bytes, []))
        if problem is not None:
            response.close()
            raise problem
        headers = response.headers.copy()
        if encodings:  # httpx must not decode again, and the wire length is not the body's
            del headers["content-encoding"]
            headers.pop("content-length", None)
        raw = cast(httpx.SyncByteStream, response.stream)
        return httpx.Response(
            response.status_code,
            headers=headers,
            stream=BoundedStream(raw, encodings, self._max_bytes),
            extensions=response.extensions,
            request=request,
        )

    def close(self) -> None:
        self._inner.close()


def _declared_length(headers: httpx.Headers) -> int:
    try:
        return int(headers.get("content-length") or 0)
    except ValueError:
        return 0


def bounded_http_client(
    max_bytes: int,
    timeout: float | None = None,
    limits: httpx.Limits | None = None,
    transport: httpx.HTTPTransport | None = None,
    **client_options: object,
) -> httpx.Client:
    """An httpx.Client whose every reply is decoded here and bounded by `max_bytes` after decoding."""
    limits = limits or httpx.Limits()
    inner = transport or httpx.HTTPTransport(limits=limits)
    return httpx.Client(
        transport=BoundedTransport(inner, max_bytes), timeout=timeout, limits=limits, **client_options
    )
