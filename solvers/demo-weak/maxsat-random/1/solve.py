"""demo-weak MaxSAT candidate: the all-false assignment, and it only understands the new WCNF form.

On an old `p wcnf` file it fails with an exception (exit 1: crash); on a new-form file the
all-false assignment may falsify a hard clause (certificate_failed) or just be poor.
"""

import sys

instance, solution = sys.argv[1], sys.argv[2]
nvars = 0
with open(instance) as fh:
    for line in fh:
        parts = line.split()
        if not parts or parts[0] == "c":
            continue
        if parts[0] == "p":
            raise SystemExit(f"demo-weak: cannot read old-format WCNF header: {line.strip()}")
        for tok in parts[1:]:
            nvars = max(nvars, abs(int(tok)))
with open(solution, "w") as fh:
    fh.write("v " + "0" * nvars + "\n")
