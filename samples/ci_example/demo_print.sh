#!/bin/sh
# Shows what the gate prints when someone adds a print() to forward: copies this example to a
# temporary directory, adds the line, and runs ci_check.sh there (expected exit code: 1).
# env: as ci_check.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
cp "$here/model.py" "$here/ci_check.sh" "$here/baseline.json" "$work/"
# The new line goes right after `h = self.norm(h)` (model.py line 20): the print is line 21
# and the branch moves to line 22.
sed -i 's/^        h = self.norm(h)$/&\n        print("hidden", h.shape)/' "$work/model.py"
cd "$work"
sh ./ci_check.sh "$@" 2>/dev/null
status=$?
echo "exit code: $status"
rm -rf "$work"
exit 0
