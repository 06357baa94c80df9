"""Rewrites a Dockerfile's heredoc COPYs (COPY <<'EOF' DEST ... EOF) into
COPY of a file beside it: buildah before 1.33 cannot read heredocs, and
make compose-test builds an older release whose Dockerfile had one."""
import pathlib
import re
import sys

path = pathlib.Path(sys.argv[1])
text = path.read_text()
n = 0


def repl(m):
    global n
    n += 1
    name = f"heredoc-{n}"
    (path.parent / name).write_text(m.group(3))
    return f"COPY {path.parent.name}/{name} {m.group(2)}\n"


text = re.sub(r"COPY <<'?(\w+)'? (\S+)\n(.*?)\n\1\n", repl, text, flags=re.S)
path.write_text(text)
print(f"heredoc-to-file: {n} heredoc(s) moved out of {path}", file=sys.stderr)
