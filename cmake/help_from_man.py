#!/usr/bin/env python3
"""Writes help_text.cc: the prose and the examples `zrec [<command>] --help` ends with,
taken from the man pages, so that the two never disagree (apps/cli/app/help_text.h).

A roff comment line `.\\" --help` in man/zrec.1 (the root) or man/zrec-<command>.1 marks
what help copies:

- in DESCRIPTION, before a paragraph: the paragraph becomes a paragraph of the help's
  description, in page order. It runs to the next paragraph macro (.PP, .SS, .TP, ...)
  or blank line; its text lines and font macros (.B, .I, .BR, .IR, ...) are joined,
  roff escapes decoded (fonts dropped) and filled to WIDTH columns.
- in EXAMPLES, inside .EX/.EE, before a command line: the line becomes one of the
  examples help prints, in page order, with its continuation lines (those after a line
  that ends in a backslash, '|' or '&&') and without a leading "$ " prompt.

A mark anywhere else, a request inside a marked paragraph that is not a font macro, or an
escape this script cannot decode fails the build.

Usage: help_from_man.py OUTPUT.cc man/zrec.1 man/zrec-a.1 man/zrec-b.1 ...
"""
import os
import re
import sys
import textwrap

MARK = '.\\" --help'

# The width the description is filled to: that of the hand-wrapped prose help printed
# before it came from the man pages.
WIDTH = 90

# Stands for roff's unbreakable space (\ ) until the text is filled.
NO_BREAK = '\x00'

# The roff escapes the marked text uses, as the terminal shows them.
ESCAPES = {
    '\\-': '-',
    '\\e': '\\',
    '\\(aq': "'",
    '\\(dq': '"',
    '\\(ga': '`',
    '\\(lq': '"',
    '\\(rq': '"',
    '\\&': '',
    '\\%': '',
    '\\ ': NO_BREAK,
    '\\fB': '',
    '\\fI': '',
    '\\fR': '',
    '\\fP': '',
}
ESCAPE_RE = re.compile('|'.join(re.escape(e) for e in sorted(ESCAPES, key=len, reverse=True)) + '|\\\\')

# Font macros: each argument in a font of its own, the fonts dropped. The two-letter ones
# alternate fonts and join their arguments without a space; .B and .I keep the spaces.
ALTERNATING = {'.BR', '.RB', '.IR', '.RI', '.BI', '.IB'}
SINGLE = {'.B', '.I'}

# Macros that end a paragraph.
BREAKS = re.compile(r'\.(PP|P|LP|SH|SS|TP|IP|HP|EX|RS|RE|SY|YS)\b')


def fail(where, message):
    sys.exit(f'{where}: {message}')


def decode(line, where):
    def one(m):
        if m.group(0) == '\\':
            fail(where, f'a roff escape help_from_man.py does not decode: {line!r}')
        return ESCAPES[m.group(0)]

    return ESCAPE_RE.sub(one, line)


def macro_arguments(text):
    """The arguments of a macro line as roff splits them: at spaces, "quoted" kept whole."""
    args, i = [], 0
    while i < len(text):
        if text[i] == ' ':
            i += 1
        elif text[i] == '"':
            j, arg = i + 1, ''
            while j < len(text):
                if text.startswith('""', j):
                    arg, j = arg + '"', j + 2
                elif text[j] == '"':
                    break
                else:
                    arg, j = arg + text[j], j + 1
            args.append(arg)
            i = j + 1
        else:
            j = text.find(' ', i)
            j = len(text) if j < 0 else j
            args.append(text[i:j])
            i = j
    return args


def paragraph_text(lines, where):
    """The words of a paragraph's roff lines, decoded, filled to WIDTH."""
    words = []
    for line, at in zip(lines, where):
        name = line.split(' ', 1)[0]
        if name in SINGLE or name in ALTERNATING:
            args = macro_arguments(line[len(name):].strip())
            line = (' ' if name in SINGLE else '').join(args)
        elif line.startswith('.') or line.startswith("'"):
            fail(at, f'a request help_from_man.py does not copy into --help: {line!r}')
        words.extend(decode(line, at).split())
    filled = textwrap.fill(' '.join(words), width=WIDTH, break_long_words=False, break_on_hyphens=False)
    return filled.replace(NO_BREAK, ' ')


def continues(text):
    stripped = text.rstrip()
    return stripped.endswith('\\') or stripped.endswith('|') or stripped.endswith('&&')


def marked_of(path):
    """The marked paragraphs (each a string) and examples (each a list of lines) of a page."""
    with open(path, encoding='utf-8') as f:
        lines = f.read().split('\n')
    paragraphs, examples, section, in_example = [], [], None, False
    i = 0
    while i < len(lines):
        line = lines[i]
        where = f'{path}:{i + 1}'
        if line.startswith('.SH '):
            section = line[4:].strip().strip('"')
        elif line.startswith('.EX'):
            in_example = True
        elif line.startswith('.EE'):
            in_example = False
        elif line.strip() == MARK:
            follows = lines[i + 1] if i + 1 < len(lines) else ''
            if section == 'DESCRIPTION' and not in_example:
                if not follows.strip() or BREAKS.match(follows) or follows.strip() == MARK:
                    fail(where, f'"{MARK}" in DESCRIPTION must stand before a paragraph\'s first line')
                body, at = [], []
                while i + 1 < len(lines) and lines[i + 1].strip() and not BREAKS.match(lines[i + 1]) \
                        and lines[i + 1].strip() != MARK:
                    i += 1
                    body.append(lines[i])
                    at.append(f'{path}:{i + 1}')
                paragraphs.append(paragraph_text(body, at))
            elif section == 'EXAMPLES' and in_example and follows and not follows.startswith('.'):
                i += 1
                example = [decode(lines[i], f'{path}:{i + 1}')]
                while continues(example[-1]) and i + 1 < len(lines) and not lines[i + 1].startswith('.'):
                    i += 1
                    example.append(decode(lines[i], f'{path}:{i + 1}'))
                if example[0].startswith('$ '):
                    example[0] = example[0][2:]
                examples.append(example)
            else:
                fail(where, f'"{MARK}" must stand before a paragraph of DESCRIPTION or a command line '
                     'inside .EX/.EE of EXAMPLES')
        i += 1
    return paragraphs, examples


def cxx_string(text):
    out = text.replace('\\', '\\\\').replace('"', '\\"').replace('\n', '\\n')
    return '"' + out + '"'


def main():
    output, pages = sys.argv[1], sys.argv[2:]
    entries = []
    for page in sorted(pages):
        m = re.fullmatch(r'zrec(?:-(.+))?\.1', os.path.basename(page))
        if not m:
            continue
        paragraphs, examples = marked_of(page)
        description = '\n\n'.join(paragraphs) + ('\n' if paragraphs else '')
        example_text = ''.join('  ' + line + '\n' for example in examples for line in example)
        if description or example_text:
            entries.append((m.group(1) or 'zrec', description, example_text))
    body = ''.join(f'    {{"{command}", {cxx_string(description)},\n     {cxx_string(examples)}}},\n'
                   for command, description, examples in entries)
    source = (
        '// Generated by cmake/help_from_man.py from the marks of man/zrec*.1: edit the man pages.\n'
        '#include "cli/app/help_text.h"\n\n'
        'namespace zrec::cli {\n\n'
        'namespace {\n\n'
        'struct HelpText {\n'
        '  std::string_view command, description, examples;\n'
        '};\n\n'
        'constexpr HelpText kHelpText[] = {\n'
        f'{body}'
        '};\n\n'
        'const HelpText* help_text_of(std::string_view command) {\n'
        '  for (const HelpText& h : kHelpText)\n'
        '    if (h.command == command) return &h;\n'
        '  return nullptr;\n'
        '}\n\n'
        '}  // namespace\n\n'
        'std::string_view help_description(std::string_view command) {\n'
        '  const HelpText* h = help_text_of(command);\n'
        '  return h ? h->description : std::string_view{};\n'
        '}\n\n'
        'std::string_view help_examples(std::string_view command) {\n'
        '  const HelpText* h = help_text_of(command);\n'
        '  return h ? h->examples : std::string_view{};\n'
        '}\n\n'
        '}  // namespace zrec::cli\n')
    # Rewritten only when it changes, so a man page edit elsewhere rebuilds nothing.
    try:
        with open(output, encoding='utf-8') as f:
            if f.read() == source:
                return
    except FileNotFoundError:
        pass
    with open(output, 'w', encoding='utf-8') as f:
        f.write(source)


if __name__ == '__main__':
    main()
