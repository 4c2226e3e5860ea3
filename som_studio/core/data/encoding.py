"""The encoding a text file is in: UTF-8 when it decodes whole, otherwise the likeliest code page spreadsheets write
(guessed with charset-normalizer), with a note that says which.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from pathlib import Path

from som_studio.core.data.checks import DataError
from som_studio.core.data.files import READ_ERRORS, open_bytes, unreadable
from som_studio.i18n import _

READ_BLOCK = 1 << 20


@dataclass(frozen=True)
class Encoding:
    """How a text file is decoded: the codec, its name for people, a note when it was guessed, and the bytes of text
    the file holds (decompressed, for a gzip'd file: what its rows are written in, not its size on disk)."""

    codec: str
    name: str
    note: str = ""
    size: int = 0


def detect_encoding(p: Path) -> Encoding:
    """The encoding ``p`` decodes in; :class:`DataError` when it has none that SOM Studio reads.

    UTF-8 (with or without a BOM) is certain when the whole file decodes in it, and is tried
    first. Otherwise the encoding is a guess: charset-normalizer ranks the code pages of
    :data:`CODE_PAGES` on the file's first megabyte, the whole file must then decode in the
    winner, and the :class:`Encoding` carries a note that says which was chosen.

    A gzip'd file's text is what is decoded; a file that is not gzip, or is cut or corrupt, is refused as such.
    """
    try:
        with open_bytes(p) as f:
            head = f.read(READ_BLOCK)
    except READ_ERRORS as exc:
        raise unreadable(p, exc) from None
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise DataError(_("{path}: the text is UTF-16 encoded; save it as CSV UTF-8 (or CP949)").format(path=p))
    if b"\x00" in head:  # NUL decodes as UTF-8, but no text table holds one: a binary file with a text name
        raise DataError(
            _("{path}: holds NUL bytes: a binary file, not a text table; save the table as CSV UTF-8").format(path=p)
        )
    utf8_error, size = _decode_error(p, "utf-8-sig")
    if utf8_error is None:
        return Encoding("utf-8-sig", "UTF-8", size=size)
    codec = _guess_code_page(head)
    later, size = _decode_error(p, codec) if codec is not None else (None, 0)
    if codec is not None and later is not None:
        raise DataError(
            _(
                "{path}: not a text file in a supported encoding: it is not UTF-8 ({error} is not UTF-8), "
                "and its start reads as {encoding} but {later} does not; save it as CSV UTF-8"
            ).format(path=p, error=utf8_error, encoding=CODE_PAGES[codec], later=later)
        )
    if codec is None:
        raise DataError(
            _(
                "{path}: not a text file in a supported encoding: it is not UTF-8 ({error} is not UTF-8) "
                "and reads as none of the code pages SOM Studio knows (CP949, Windows-1252, ...); "
                "save it as CSV UTF-8"
            ).format(path=p, error=utf8_error)
        )
    name = CODE_PAGES[codec]
    note = _(
        "{path}: not UTF-8 ({error} is not UTF-8): read as {encoding}, the likeliest encoding of its text "
        "(a guess); if its words look wrong, save it as CSV UTF-8"
    ).format(path=p, error=utf8_error, encoding=name)
    return Encoding(codec, name, note, size)


#: The code pages a CSV that is not UTF-8 may be in, by codec: the ones spreadsheets save "CSV" in
#: (Korean Excel's CP949 first, for the ties below), and the name people know each by.
CODE_PAGES: dict[str, str] = {
    "cp949": "CP949",
    "cp1252": "Windows-1252",
    "cp1250": "Windows-1250",
    "cp1251": "Windows-1251",
    "cp1253": "Windows-1253",
    "cp1254": "Windows-1254",
    "cp1257": "Windows-1257",
    "cp932": "Shift_JIS (CP932)",
    "gb18030": "GB18030",
    "big5": "Big5",
}


def _decode_error(p: Path, codec: str) -> tuple[str | None, int]:
    """Where ``p`` stops decoding in ``codec`` (``byte 0x.. at offset N`` of its text), read in blocks, ``None`` if
    it decodes; and the bytes read."""
    dec = codecs.getincrementaldecoder(codec)()
    offset = 0
    try:
        with open_bytes(p) as f:
            while block := f.read(READ_BLOCK):
                dec.decode(block)
                offset += len(block)
            dec.decode(b"", final=True)
    except UnicodeDecodeError as exc:
        bad = exc.object[exc.start : exc.start + 1].hex()
        return _("byte 0x{byte} at offset {offset}").format(byte=bad, offset=offset + exc.start), offset
    except READ_ERRORS as exc:
        raise unreadable(p, exc) from None
    return None, offset


def _guess_code_page(head: bytes) -> str | None:
    """The likeliest of :data:`CODE_PAGES` for ``head``, or ``None`` if it reads as none.

    charset-normalizer ranks them by how messy and how coherent the decoded text is; short
    texts often tie (a few accented letters decode well in several code pages). A tie goes
    to the first in :data:`CODE_PAGES` order, except CP949 unless its text is Hangul: two
    Western letters in a row also make a valid CP949 pair, read as a Chinese character. The
    code page named is the first that reads the text alike (``café €`` is Windows-1252's, though
    Windows-1250 reads it the same). Text it finds too messy for any (a few rare letters
    side by side) goes to the first code page in that order that reads it as text, without
    control characters; bytes that no code page reads so are not text.
    """
    from charset_normalizer import from_bytes

    matches = list(from_bytes(head, cp_isolation=list(CODE_PAGES)))
    hangul = _mostly_hangul(head)
    fits = [m for m in matches if m.encoding in CODE_PAGES and (m.encoding != "cp949" or hangul)]
    if not fits and matches:  # CP949 alone decodes it (Hanja, say): still the likeliest
        return str(matches[0].encoding)
    if not fits:
        return next((c for c in CODE_PAGES if (c != "cp949" or hangul) and _reads_as_text(head, c)), None)
    rank = [(round(m.chaos, 3), round(m.coherence, 3)) for m in fits]
    tied = [str(m.encoding) for m, r in zip(fits, rank) if r == rank[0]]
    order = list(CODE_PAGES)
    chosen = min(tied, key=order.index)
    # Code pages share most letters: one earlier in the order that reads this text alike is the one to name.
    text = head.decode(chosen, "replace")
    return next(c for c in order if c == chosen or (c != "cp949" and head.decode(c, "replace") == text))


def _reads_as_text(head: bytes, codec: str) -> bool:
    """Whether ``head`` decodes in ``codec`` (its last character may be cut) to text without control characters."""
    try:
        text = codecs.getincrementaldecoder(codec)().decode(head)
    except UnicodeDecodeError:
        return False
    return all(ch >= " " or ch in "\t\r\n" for ch in text)


def _mostly_hangul(head: bytes) -> bool:
    """Whether ``head``'s non-ASCII text read as CP949 is mostly Hangul syllables."""
    text = head.decode("cp949", "ignore")
    wide = [ch for ch in text if ord(ch) > 0x7F]
    hangul = sum(1 for ch in wide if "\uac00" <= ch <= "\ud7a3")
    return bool(wide) and hangul * 2 > len(wide)
