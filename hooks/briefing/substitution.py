"""A skill body as a harness renders it before its agent sees it.

When Claude Code delivers a skill itself it substitutes variables and
arguments in the body and runs its ``!`` commands; Gemini CLI fills ``${…}``
into an extension's skills (facts/rendering.md, and docs/claude-code.md and
docs/gemini-cli.md, where what was measured is written down). briefing
delivers what the harness would deliver: the same substitutions, in the same
order, with the same escapes, ported from the harness's own code and checked
against the real CLI. A command is never run: a body in which the harness would
run one cannot be delivered as it delivers it, and the caller refuses it.

Each harness module says which values apply to which kind of skill (its
``render_skill``); this module holds the algorithms, and returns a
``Rendering``. ``re`` is imported only for a body that needs it.
"""
from .files import read_text
from .records import Unreadable
from .text import _utf8_len


class Rendering(object):
    """What a harness makes of one skill body.

    text     the body as the harness delivers it (None when it cannot be delivered so)
    tokens   [(token, count)] of what was substituted, in order, for the doctor
    problem  why the body cannot be delivered as the harness delivers it, or None
    cause    "command" (a shell command the harness would run), "value" (a value a
             hook cannot know), "unsafe" (a value that cannot be rendered safely)
    line     the first such line of the file, as (1-based number, text), or None
    skip     for a refused skill the harness would not preload natively either: why
             (then letting the harness preload it is no fix)
    """

    __slots__ = ("text", "tokens", "problem", "cause", "line", "skip")

    def __init__(self, text, tokens=(), problem=None, cause=None, line=None):
        self.text = text
        self.tokens = list(tokens)
        self.problem = problem
        self.cause = cause
        self.line = line
        self.skip = None

    @property
    def size(self):
        return _utf8_len(self.text) if self.text is not None else None


def refused(problem, cause, tokens=(), line=None):
    return Rendering(None, tokens, problem, cause, line)


def safe_value(value):
    """Whether a value can go into a briefing as text: valid Unicode, no NUL.

    A path that is not valid UTF-8 reaches Python as lone surrogates, which no
    harness can receive as they are.
    """
    if "\0" in value:
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# -- Claude Code ------------------------------------------------------------------------------
#
# Ported from Claude Code 2.1.328 (its skill loader, the argument filler and the shell-command
# scanner), and measured with every token below in a native preload (docs/claude-code.md).
# A preload fills its arguments with "": $ARGUMENTS and the skill's named ``arguments:`` become
# empty, $0, $1 and $ARGUMENTS[0] stay as written, ``\$`` before one of them is an escape that
# leaves the ``$``. Every substituted value is wrapped so that nothing after it can substitute
# inside it (U+FFFE around it, U+FFFF for each ``$``), which is why U+FFFE and U+FFFF in the body
# become U+FFFD.

DOLLAR, WRAP, REPLACEMENT = "\uffff", "\ufffe", "\ufffd"

# JavaScript's \s (what Claude Code's patterns use), which is not Python's.
JS_SPACE = "\t\n\x0b\x0c\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"

DISABLED_BY_POLICY = "[shell command execution disabled by policy]"

SESSION_PLACEHOLDER = "00000000-0000-0000-0000-000000000000"


def wrapped(value):
    """A substituted value, inert for every substitution after it (Claude Code's wrapper)."""
    return WRAP + value.replace(DOLLAR, REPLACEMENT).replace(WRAP, REPLACEMENT).replace("$", DOLLAR) + WRAP


def sensitive_option(key):
    return "[sensitive option '%s' not available in skill content]" % key


def claude_render(text, values, arg_names=(), options=None):
    """``text`` as Claude Code renders a preloaded skill: (rendered, [(token, count)]).

    ``values`` are the ``${…}`` tokens that apply to this kind of skill, as
    [(token, value)]; every other ``${…}`` stays as written. ``arg_names`` are
    the skill's ``arguments:``. ``options`` is None where ``${user_config.K}``
    stays as written (the plugin declares no ``userConfig``), else {K: value},
    a value of None meaning the option is sensitive.
    """
    tokens = []
    if DOLLAR in text or WRAP in text:
        text = text.replace(DOLLAR, REPLACEMENT).replace(WRAP, REPLACEMENT)
    if "${" in text:
        for token, value in values:
            count = text.count(token)
            if count:
                text = text.replace(token, wrapped(value))
                tokens.append((token, count))
        if options is not None and "${user_config." in text:
            text = fill_options(text, options, tokens)
    if "$" not in text:
        return text.replace(DOLLAR, "$").replace(WRAP, ""), tokens
    import re
    names = argument_names(arg_names)
    escapable = "|".join(["[0-9]", "ARGUMENTS"] + [re.escape(n) + r"(?![\[A-Za-z0-9_])" for n in names])
    text, count = re.subn(r"(?<!\\)\\\$(?=%s)" % escapable, DOLLAR, text)
    if count:
        tokens.append(("\\$", count))
    for name in names:
        text, count = re.subn(r"\$%s(?![\[A-Za-z0-9_])" % re.escape(name), WRAP + WRAP, text)
        if count:
            tokens.append(("$" + name, count))
    # A preload has no arguments: $ARGUMENTS[N] and $N name none, and stay as written.
    text = re.sub(r"\$ARGUMENTS\[[0-9]+\]", lambda m: DOLLAR + m.group(0)[1:], text)
    count = text.count("$ARGUMENTS")
    if count:
        text = text.replace("$ARGUMENTS", WRAP + WRAP)
        tokens.append(("$ARGUMENTS", count))
    return text.replace(DOLLAR, "$").replace(WRAP, ""), tokens


def fill_options(text, options, tokens):
    """``${user_config.K}``: a sensitive option's notice; others are the caller's to refuse."""
    import re

    def fill(match):
        key = match.group(1)
        if key in options and options[key] is None:
            tokens.append((match.group(0), 1))
            return sensitive_option(key)  # not wrapped, as in Claude Code
        return match.group(0)

    return re.sub(r"\$\{user_config\.([^}]+)\}", fill, text)


def argument_names(raw):
    """The named arguments Claude Code fills: at most 64 of at most 64 UTF-16 units, longest first."""
    names = [n for n in raw if n and len(n.encode("utf-16-le")) // 2 <= 64][:64]
    return sorted(names, key=lambda n: -(len(n.encode("utf-16-le")) // 2))


def user_options(text):
    """The keys of the ``${user_config.K}`` tokens in ``text``, in order, each once."""
    if "${user_config." not in text:
        return []
    import re
    seen = []
    for key in re.findall(r"\$\{user_config\.([^}]+)\}", text):
        if key not in seen:
            seen.append(key)
    return seen


def js_blank(text):
    """Whether JavaScript's String.trim() leaves nothing of ``text``."""
    import re
    return re.fullmatch("[%s]*" % JS_SPACE, text) is not None


def mask_code_spans(text):
    """Claude Code's masking before it looks for ``!`cmd```: an inline code span not opened
    right after ``!`` or a backtick is blanked, so a ``!`…``` inside one is not a command."""
    import re

    def blank(match):
        before = text[match.start() - 1] if match.start() > 0 else ""
        if before in ("!", "`"):
            return match.group(0)
        return "`" + " " * (len(match.group(0)) - 2) + "`"

    return re.sub(r"`[^`\n]+`", blank, text)


FENCE = r"```![%s]*\n?([\s\S]*?)\n?```" % JS_SPACE
INLINE = r"(?<![^%s])!`([^`]+)`" % JS_SPACE


def claude_commands(text):
    """The shell commands Claude Code would run in a rendered body: [(start, raw, command)].

    A ```` ```! ```` fence anywhere, and ``!`cmd``` at the start of a line or
    after whitespace (not ``[!`cmd`]``), outside inline code spans; one whose
    command is blank is not run. Sorted by where they start.
    """
    if "!" not in text:
        return []
    import re
    found = [(m.start(), m.group(0), m.group(1)) for m in re.finditer(FENCE, text)]
    if "!`" in text:
        found += [(m.start(), m.group(0), m.group(1)) for m in re.finditer(INLINE, mask_code_spans(text))]
    return sorted((start, raw, command) for start, raw, command in found
                  if not js_blank(command.replace("\r\n", "\n")))


def claude_disable_commands(text):
    """What Claude Code delivers under ``disableSkillShellExecution``: every command form
    (an empty fence too) replaced by the notice, and nothing run."""
    if "!" not in text:
        return text, 0
    import re
    text, count = re.subn(r"```![%s]*\n?[\s\S]*?\n?```" % JS_SPACE, DISABLED_BY_POLICY, text)
    if "!`" in text:
        masked = mask_code_spans(text)
        for match in reversed(list(re.finditer(r"(?<![^%s])!`[^`]+`" % JS_SPACE, masked))):
            text = text[:match.start()] + DISABLED_BY_POLICY + text[match.end():]
            count += 1
    return text, count


def claude_skill(body, base_dir, values, arg_names=(), options=None, shell_disabled=False,
                 refuse_tokens=()):
    """A preloaded skill as Claude Code delivers it, or why it cannot be delivered so.

    ``base_dir`` is the folder Claude Code names ("Base directory for this
    skill: …") and substitutes for ``${CLAUDE_SKILL_DIR}``, or None (a legacy
    command). Commands are searched where Claude Code searches them, in that
    line and the rendered body together. ``refuse_tokens`` are [(token, why)]
    whose value a hook cannot know.
    """
    for token, why in refuse_tokens:
        if token in body:
            return refused("uses %s, %s" % (token, why), "value", line=first_line(body, body.find(token)))
    for token, value in values:
        if token in body and not safe_value(value):
            return refused("%s would be %r, which is not text a harness can receive" % (token, value),
                           "unsafe")
    if options is not None:
        for key in user_options(body):
            if options.get(key, "") is not None:
                return refused("uses ${user_config.%s}, a plugin option whose value Claude Code keeps "
                               "in its settings and secure storage, where a hook does not look" % key,
                               "value", line=first_line(body, body.find("${user_config.%s}" % key)))
    prefix = "Base directory for this skill: %s\n\n" % base_dir if base_dir is not None else ""
    shown_prefix = claude_render(prefix, values, arg_names)[0] if prefix else ""
    text, tokens = claude_render(body, values, arg_names, options)
    whole = shown_prefix + text
    if shell_disabled:
        done, count = claude_disable_commands(whole)
        if count:
            if not done.startswith(shown_prefix) or claude_commands(shown_prefix):
                return refused("its folder's path holds a shell command form Claude Code would change",
                               "unsafe", tokens)
            text = done[len(shown_prefix):]
            tokens.append(("!`…` (disableSkillShellExecution)", count))
        return Rendering(text, tokens)
    commands = claude_commands(whole)
    if commands:
        start, raw, _ = commands[0]
        if start < len(shown_prefix):
            return refused("the path of its folder holds %r, which Claude Code would run as a shell "
                           "command" % raw.split("\n", 1)[0], "unsafe", tokens)
        if raw not in body:
            return refused("a value filled into it makes %r, which Claude Code would run as a shell "
                           "command" % raw.split("\n", 1)[0], "unsafe", tokens,
                           line=first_line(text, start - len(shown_prefix)))
        return refused("runs a shell command, which Claude Code runs when it preloads the skill and a "
                       "hook must not", "command", tokens, line=first_line(text, start - len(shown_prefix)))
    return Rendering(text, tokens)


def in_file(rendering, path, body):
    """``rendering`` with its line numbered as in the file at ``path``, whose body is ``body``."""
    if rendering is not None and rendering.line is not None:
        try:
            text = read_text(path)
        except Unreadable:
            text = ""
        above = text[:len(text) - len(body)].count("\n") if text.endswith(body) else 0
        rendering.line = (rendering.line[0] + above, rendering.line[1])
    return rendering


def first_line(text, index):
    """(1-based line number within ``text``, that line) of position ``index``."""
    start = text.rfind("\n", 0, index) + 1
    end = text.find("\n", index)
    return text.count("\n", 0, index) + 1, text[start:end if end >= 0 else len(text)]


# -- Gemini CLI -------------------------------------------------------------------------------
#
# Gemini CLI 0.61.0 hydrates an extension's skills (hydrateString) with ``/\${(.*?)}/g`` against
# {extensionPath, workspacePath, "/", pathSeparator, ...the extension's settings}: a key with a
# value is replaced, any other stays as written. The lookup is a plain object's, so the names of
# Object.prototype's members are found too, and become what String() makes of them (measured).

OBJECT_PROTOTYPE = dict(
    [(name, "function %s() { [native code] }" % name) for name in (
        "__defineGetter__", "__defineSetter__", "hasOwnProperty", "__lookupGetter__",
        "__lookupSetter__", "isPrototypeOf", "propertyIsEnumerable", "toString", "valueOf",
        "toLocaleString")],
    constructor="function Object() { [native code] }", __proto__="[object Object]")


def gemini_hydrate(body, context, unknown=None):
    """``body`` as Gemini CLI hydrates an extension's skill, or why it cannot be.

    ``context`` maps the keys with known values; ``unknown(key)`` says why a key's
    value cannot be known (it may come from a ``.env`` file or the keychain), or None.
    """
    if "${" not in body:
        return Rendering(body)
    import re
    tokens, problems = [], []

    def fill(match):
        key = match.group(1)
        why = unknown(key) if unknown else None
        if why:
            problems.append((match, why))
            return match.group(0)
        value = context.get(key) if key in context else OBJECT_PROTOTYPE.get(key)
        if value is None:
            return match.group(0)
        for known in tokens:
            if known[0] == match.group(0):
                known[1] += 1
                break
        else:
            tokens.append([match.group(0), 1])
        return value

    text = re.sub(r"\$\{([^\n\r\u2028\u2029]*?)\}", fill, body)
    if problems:
        match, why = problems[0]
        return refused("uses %s, %s" % (match.group(0), why), "value",
                       line=first_line(body, match.start()))
    return Rendering(text, [tuple(t) for t in tokens])
