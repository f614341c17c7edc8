"""What an SMTP server's refusal says about the reader's address: the pure decision behind
flagging an address.

Flagging after repeated hard failures exists to stop mailing dead mailboxes. A 5xx reply alone
does not say the mailbox is dead: RFC 3463's enhanced status code (sent at the start of the
reply text by servers that offer ENHANCEDSTATUSCODES, RFC 2034) says what the failure is about.
A security or policy refusal (X.7.x: relaying denied, our IP or domain on a block list, SPF,
DKIM or DMARC failures, "likely unsolicited") is about US — our sending IP, domain or
configuration — and counting it against the reader would disable good readers because of our
own reputation problem. So:

- X.7.x (except X.7.17 / X.7.18, RFC 7293: the mailbox or domain has a new owner) and X.1.7 /
  X.1.8 (our sender address) at 5xx: ``temporary`` — retried with backoff, never counted against
  the reader, marked as ours so the operator is told;
- X.2.3, X.3.4 (the message is too long or too big) and X.6.x (content or media): this message
  fails, the reader's count is untouched (another message may well go through);
- a 5xx without an enhanced code whose text says it is about our relay, our login or our
  envelope sender ("Relaying denied", "Relay access denied", "Authentication required",
  "Sender address rejected", "Client host rejected", qmail's "rcpthosts"…: servers without
  ENHANCEDSTATUSCODES, where the text is all there is) is a refusal of us, as X.7.x;
- any other 5xx, with an enhanced code or without one (RFC 5321's 550 is "mailbox
  unavailable"): the reader's, counted as before;
- 4xx is temporary whatever its enhanced code; 2xx/3xx is accepted; no reply at all (a
  connection failure) is temporary.

An enhanced code whose class disagrees with the reply's first digit is ignored (RFC 3463: the
class must match the reply code), and the basic code decides.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Enhanced", "Verdict", "enhanced_status", "judge_reply", "refuses_the_message_size"]

#: ``class.subject.detail`` at the start of the reply text (RFC 3463 section 2: subject and
#: detail are one to three digits, without leading zeros beyond a single 0).
_ENHANCED = re.compile(r"\s*([245])\.(0|[1-9][0-9]{0,2})\.(0|[1-9][0-9]{0,2})(?![0-9.])")

#: 5xx details about our sender address (RFC 3463 X.1.7 bad sender's mailbox address syntax,
#: X.1.8 bad sender's system address): every message would get them.
_OUR_ADDRESS = {(1, 7), (1, 8)}
#: X.7.x details about the recipient after all (RFC 7293: mailbox / domain owner has changed —
#: a different person now holds the address; mail must stop).
_POLICY_ABOUT_THE_RECIPIENT = {(7, 17), (7, 18)}
#: 5xx details about this message, not the address (X.2.3 message length exceeds
#: administrative limit, X.3.4 message too big for system); X.6.x (content, media) likewise.
_THIS_MESSAGE = {(2, 3), (3, 4)}

#: Words of a bare 5xx (no enhanced code) that say it refuses us: our relay permission, our
#: login, our envelope sender or our host. Narrow on purpose: a reply about the recipient
#: ("User unknown in relay recipient table", "Recipient address rejected") must not match, since
#: a dead mailbox must still count against its reader.
_ABOUT_US = re.compile(
    r"\brelay(?:ing)?\s+(?:access\s+)?(?:denied|not\s+(?:permitted|allowed)|prohibited|refused"
    r"|forbidden)"
    r"|\b(?:not\s+(?:permitted|allowed)\s+to|unable\s+to|cannot|can't|do\s+not|don't|will\s+not"
    r"|won't)\s+relay\b"
    r"|\brcpthosts\b"
    r"|\bauthentication\s+(?:is\s+)?required\b|\bmust\s+(?:first\s+)?authenticate\b"
    r"|\bsender\s+(?:address\s+)?(?:rejected|refused|denied)\b"
    r"|\bclient\s+host\s+rejected\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Enhanced:
    klass: int
    subject: int
    detail: int

    def __str__(self) -> str:
        return f"{self.klass}.{self.subject}.{self.detail}"


def enhanced_status(text: str) -> Enhanced | None:
    """The RFC 3463 enhanced status code at the start of a reply's text, or None."""
    m = _ENHANCED.match(text or "")
    if m is None:
        return None
    return Enhanced(int(m.group(1)), int(m.group(2)), int(m.group(3)))


@dataclass(frozen=True)
class Verdict:
    """``outcome``: ``ok`` | ``temporary`` (retry with backoff) | ``permanent`` (this message
    failed). ``against_reader``: a permanent failure counts towards flagging the address.
    ``ours``: the server refused us (policy, our sender): the operator must look."""

    outcome: str
    against_reader: bool = False
    ours: bool = False


def judge_reply(code: int | None, text: str = "") -> Verdict:
    """What a reply to one message (at RCPT or after DATA) means for it and for its reader."""
    if code is None:
        return Verdict("temporary")
    if 200 <= code < 400:
        return Verdict("ok")
    enh = enhanced_status(text)
    if enh is not None and enh.klass != code // 100:
        enh = None
    policy = enh is not None and enh.subject == 7
    if not 500 <= code < 600:
        return Verdict("temporary", ours=policy)
    if enh is None:
        if _ABOUT_US.search(text or ""):
            return Verdict("temporary", ours=True)
        return Verdict("permanent", against_reader=True)
    what = (enh.subject, enh.detail)
    if what in _POLICY_ABOUT_THE_RECIPIENT:
        return Verdict("permanent", against_reader=True)
    if policy or what in _OUR_ADDRESS:
        return Verdict("temporary", ours=True)
    if what in _THIS_MESSAGE or enh.subject == 6:
        return Verdict("permanent", against_reader=False)
    return Verdict("permanent", against_reader=True)


def refuses_the_message_size(code: int, text: str = "") -> bool:
    """Whether a refusal at MAIL FROM is about this message's size, not about our sender.

    The client declares the size there (RFC 1870 ``SIZE=n``, when the server offers SIZE), and
    a server over its fixed maximum answers 552 (RFC 1870 section 6), or an enhanced X.3.4 /
    X.2.3. Every other refusal at MAIL FROM is about us (see smtp.py); this one fails the
    message alone — a smaller one goes through — and says nothing about the reader.
    """
    if not 500 <= code < 600:
        return False
    enh = enhanced_status(text)
    if enh is not None and enh.klass == code // 100:
        return (enh.subject, enh.detail) in _THIS_MESSAGE
    return code == 552
