"""The fenced block after `<!-- install-test: NAME -->` in docs/integration.md (as install_test.sh's block())."""
import sys


def block(doc, name):
    lines = open(doc, encoding="utf-8").read().splitlines()
    marker = f"<!-- install-test: {name} -->"
    if marker not in lines:
        raise SystemExit(f"docs/integration.md has no block {marker}")
    out, inside = [], False
    for line in lines[lines.index(marker) + 1:]:
        if line.startswith("```"):
            if inside:
                return "\n".join(out) + "\n"
            inside = True
        elif inside:
            out.append(line)
    raise SystemExit(f"{marker}: unterminated block")


if __name__ == "__main__":
    sys.stdout.write(block(sys.argv[1], sys.argv[2]))
