"""The pure decision behind flagging an address: what an SMTP reply says about the reader.

Exhaustive over reply codes 0-699 and enhanced codes of every class, subject 0-9 and detail
0-40 (and the longest forms), each checked against the rules of docs/notify.md."""

from __future__ import annotations

import itertools

import pytest

from fairfetch.notify.replies import Enhanced, Verdict, enhanced_status, judge_reply

OK = Verdict("ok")
READER = Verdict("permanent", against_reader=True)  # the address's: counts towards the flag
MESSAGE = Verdict("permanent", against_reader=False)  # this message failed; reader untouched
OURS = Verdict("temporary", ours=True)  # policy refused us: retried, operator told
LATER = Verdict("temporary")

SUBJECTS = range(10)
DETAILS = [*range(41), 99, 100, 999]


def expected_5xx(subject: int, detail: int) -> Verdict:
    """The rules, written out independently of the module's tables."""
    if subject == 7:
        return READER if detail in (17, 18) else OURS
    if subject == 1 and detail in (7, 8):
        return OURS
    if subject == 6 or (subject, detail) in ((2, 3), (3, 4)):
        return MESSAGE
    return READER


def test_notify_replies_every_code_without_an_enhanced_code() -> None:
    for code in range(700):
        v = judge_reply(code, "whatever the server says")
        if 200 <= code < 400:
            assert v == OK, code
        elif 500 <= code < 600:
            # RFC 5321: 550 is "mailbox unavailable"; nothing says otherwise
            assert v == READER, code
        else:
            assert v == LATER, code


@pytest.mark.parametrize("code", [500, 501, 530, 550, 551, 552, 553, 554, 571])
def test_notify_replies_every_enhanced_code_of_a_5xx(code: int) -> None:
    for subject, detail in itertools.product(SUBJECTS, DETAILS):
        text = f"{5}.{subject}.{detail} reason"
        assert judge_reply(code, text) == expected_5xx(subject, detail), text


@pytest.mark.parametrize("code", [421, 450, 451, 452, 454])
def test_notify_replies_a_4xx_is_temporary_whatever_its_enhanced_code(code: int) -> None:
    for subject, detail in itertools.product(SUBJECTS, DETAILS):
        v = judge_reply(code, f"4.{subject}.{detail} try later")
        assert v == (OURS if subject == 7 else LATER)
        assert not v.against_reader


@pytest.mark.parametrize("code", [250, 251, 354])
def test_notify_replies_2xx_and_3xx_are_accepted_whatever_the_text(code: int) -> None:
    for subject, detail in itertools.product(SUBJECTS, DETAILS):
        assert judge_reply(code, f"2.{subject}.{detail} ok") == OK
        assert judge_reply(code, f"5.7.{detail} odd") == OK


def test_notify_replies_an_enhanced_class_that_disagrees_with_the_code_is_ignored() -> None:
    for klass, subject, detail in itertools.product((2, 4), SUBJECTS, DETAILS):
        assert judge_reply(550, f"{klass}.{subject}.{detail} mixed up") == READER
    # and a 5.x.x on a 4xx reply does not make it permanent
    assert judge_reply(451, "5.1.1 mixed up") == LATER
    assert judge_reply(451, "5.7.1 mixed up") == LATER


def test_notify_replies_no_reply_at_all_is_temporary_and_not_the_readers() -> None:
    assert judge_reply(None) == LATER
    assert judge_reply(None, "5.1.1 not a reply") == LATER


def test_notify_replies_never_both_retried_and_counted_nor_ours_and_failed() -> None:
    for code, klass, subject, detail in itertools.product(
        (None, 250, 421, 451, 550, 554), (2, 4, 5), SUBJECTS, DETAILS
    ):
        v = judge_reply(code, f"{klass}.{subject}.{detail} x")
        assert v.outcome in ("ok", "temporary", "permanent")
        assert not (v.outcome != "permanent" and v.against_reader)
        assert not (v.ours and v.outcome != "temporary")


@pytest.mark.parametrize(
    ("code", "text", "verdict"),
    [
        # the replies an operator actually meets
        (550, "5.7.1 Relaying denied", OURS),
        (554, "5.7.1 Service unavailable; Client host [192.0.2.1] blocked using zen", OURS),
        (550, "5.7.1 [192.0.2.1] Our system has detected that this message is\n"
              "5.7.1 likely unsolicited mail.", OURS),
        (550, "5.7.26 Unauthenticated email from example.org is not accepted due to "
              "domain's DMARC policy", OURS),
        (550, "5.7.23 SPF validation failed", OURS),
        (550, "5.7.606 Access denied, banned sending IP", OURS),
        (553, "5.1.8 Sender address rejected: Domain not found", OURS),
        (550, "5.1.1 The email account that you tried to reach does not exist", READER),
        (550, "5.1.10 RESOLVER.ADR.RecipientNotFound", READER),
        (550, "5.2.1 The email account that you tried to reach is disabled", READER),
        (552, "5.2.2 The email account that you tried to reach is over quota", READER),
        (550, "5.4.4 Unable to route: no such domain", READER),
        (550, "5.7.17 Mailbox owner has changed", READER),
        (550, "5.7.18 Domain owner has changed", READER),
        (552, "5.3.4 Message size exceeds fixed maximum message size", MESSAGE),
        (552, "5.2.3 Message length exceeds administrative limit", MESSAGE),
        (554, "5.6.0 Message content rejected", MESSAGE),
        (550, "Requested action not taken: mailbox unavailable", READER),
        (421, "4.7.0 Try again later, closing connection", OURS),
        (451, "4.7.1 Greylisted, please try again", OURS),
        (452, "4.2.2 Mailbox full", LATER),
    ],
)
def test_notify_replies_real_world_answers(code: int, text: str, verdict: Verdict) -> None:
    assert judge_reply(code, text) == verdict


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("5.7.1 Relaying denied", Enhanced(5, 7, 1)),
        ("  5.1.1 no such user", Enhanced(5, 1, 1)),
        ("5.7.1", Enhanced(5, 7, 1)),
        ("5.7.26 DMARC", Enhanced(5, 7, 26)),
        ("4.7.999 x", Enhanced(4, 7, 999)),
        ("2.0.0 Ok", Enhanced(2, 0, 0)),
        ("5.0.0\nsecond line", Enhanced(5, 0, 0)),
        ("", None),
        ("no such user", None),
        ("user 5.7.1 blocked", None),  # only at the start of the text
        ("3.7.1 not a class", None),
        ("6.7.1 not a class", None),
        ("5.7.1000 too long", None),
        ("5.1000.1 too long", None),
        ("5.07.1 leading zero", None),
        ("5.7.01 leading zero", None),
        ("5.7 short", None),
        ("5.7.1.2 four parts", None),
        ("55.7.1 two digits", None),
    ],
)
def test_notify_replies_enhanced_status_is_read_from_the_start_of_the_text(
    text: str, found: Enhanced | None
) -> None:
    assert enhanced_status(text) == found


@pytest.mark.parametrize(
    "text",
    [
        # sendmail, Exim, Postfix, qmail, MS Exchange, … without ENHANCEDSTATUSCODES: the
        # text is all there is, and it says the refusal is about us (our relay, our login,
        # our envelope sender), not about the reader's mailbox
        "Relaying denied",
        "<ana@example.org>... Relaying denied. Proper authentication required.",
        "<ana@example.org>: Relay access denied",
        "relay not permitted",
        "Relaying not allowed",
        "RELAY ACCESS DENIED",
        "we do not relay",
        "Unable to relay for ana@example.org",
        "not permitted to relay through this server without authentication",
        "sorry, that domain isn't in my list of allowed rcpthosts (#5.7.1)",
        "Authentication required",
        "SMTP authentication is required",
        "Authentication Required: you must authenticate first",
        "Sender address rejected: Domain not found",
        "<mail@news.example.test>: Sender address rejected: Access denied",
        "Client host rejected: cannot find your hostname",
    ],
)
@pytest.mark.parametrize("code", [550, 551, 553, 554, 530])
def test_notify_replies_a_bare_5xx_about_our_relay_login_or_sender_is_ours(
    code: int, text: str
) -> None:
    assert judge_reply(code, text) == OURS


@pytest.mark.parametrize(
    "text",
    [
        # the reader's mailbox: still counted (RFC 5321's 550 is "mailbox unavailable")
        "No such user",
        "No such user here",
        "Requested action not taken: mailbox unavailable",
        "mailbox unavailable",
        "User unknown in relay recipient table",
        "<ana@example.org>: Recipient address rejected: User unknown in local recipient table",
        "user does not exist",
        "Mailbox disabled, not accepting messages",
        "whatever the server says",
        "",
    ],
)
@pytest.mark.parametrize("code", [550, 551, 553, 554])
def test_notify_replies_a_bare_5xx_about_the_mailbox_is_still_the_readers(
    code: int, text: str
) -> None:
    assert judge_reply(code, text) == READER


def test_notify_replies_an_enhanced_code_outweighs_the_text() -> None:
    """Where the server gave an enhanced code, that code decides, whatever words follow."""
    assert judge_reply(550, "5.1.1 User unknown; relaying denied") == READER
    assert judge_reply(554, "5.6.0 relay access denied") == MESSAGE
    assert judge_reply(550, "5.7.1 No such user") == OURS
    # a 4xx stays temporary, and a 2xx accepted, whatever the text
    assert judge_reply(451, "Relaying temporarily denied").outcome == "temporary"
    assert judge_reply(250, "relaying denied") == OK


@pytest.mark.parametrize(
    ("code", "text", "about_size"),
    [
        # RFC 1870: 552 to a MAIL FROM whose SIZE exceeds the server's fixed maximum
        (552, "5.3.4 Message size exceeds fixed limit", True),  # Postfix
        (552, "Message size exceeds maximum permitted", True),  # Exim
        (552, "Error: message size exceeds fixed maximum message size", True),  # aiosmtpd
        (554, "5.3.4 Message too big for system", True),
        (552, "5.2.3 Message length exceeds administrative limit", True),
        # about our sender, or a policy: still a refusal of us
        (553, "5.7.1 sender address rejected: not owned by this account", False),
        (550, "5.7.1 Sender address rejected", False),
        (552, "5.7.1 not allowed", False),
        (550, "Sender address rejected", False),
        (530, "5.7.0 Authentication required", False),
        # a temporary lack of room is the server's, for every message
        (452, "4.3.1 Insufficient system storage", False),
        (452, "Insufficient system storage", False),
    ],
)
def test_notify_replies_a_sender_refusal_about_the_message_size(
    code: int, text: str, about_size: bool
) -> None:
    from fairfetch.notify.replies import refuses_the_message_size

    assert refuses_the_message_size(code, text) is about_size
