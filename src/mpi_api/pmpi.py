#!/usr/bin/env python3
"""The MPI profiling interface's names, from mpi.h's own declarations.

Every function mpi.h declares as MPI_X is also PMPI_X (MPI-3.1 §14.2):
libtagwire_mpi.so defines PMPI_X as a second name of the same code (the
linker's --defsym, meson.build), and mpi.h declares PMPI_X in a block this
script writes from the MPI_X declarations above it. As in MPICH, MPI_X is
the weak name and PMPI_X the strong one: every file of the library is
compiled with `#pragma weak MPI_X` for each X (the header `weak` prints).

  pmpi.py names MPI_H   the X of every MPI_X declared (for meson.build)
  pmpi.py weak MPI_H    a header of #pragma weak MPI_X lines (for meson.build)
  pmpi.py write MPI_H   rewrites the PMPI block of MPI_H
  pmpi.py check MPI_H   fails if the PMPI block is not what write would make
"""
import re
import sys

# clang-format off / on: the block is this script's to lay out (ci/check-format
# would rewrap it, and the check below would then fail).
BEGIN = ("/* PMPI_: the profiling interface (written by pmpi.py from the declarations above) */\n"
         "/* clang-format off */\n")
END = "/* clang-format on */\n/* end of PMPI_ */\n"
DECLARATION = re.compile(r"^[A-Za-z_][\w \*]*?\bMPI_(\w+)\(", re.M)


def split(text):
    if BEGIN in text:
        head, rest = text.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        return head, tail
    marker = "#ifdef __cplusplus\n}\n#endif\n\n#endif /* TAGWIRE_MPI_H */"
    at = text.rindex(marker)
    return text[:at], "\n" + text[at:]


def declarations(head):
    """Each MPI_ function declaration of mpi.h, whole (it may span lines)."""
    out = []
    for m in DECLARATION.finditer(head):
        line_start = m.start()
        if head[line_start:].startswith("typedef"):
            continue
        end = head.index(";", m.end())
        out.append((m.group(1), head[line_start:end + 1]))
    return out


def block(head):
    lines = [BEGIN]
    for name, decl in declarations(head):
        pmpi = decl.replace("MPI_" + name + "(", "PMPI_" + name + "(", 1)
        # Continuation lines stay aligned under the opening parenthesis.
        pmpi = pmpi.replace("\n", "\n ")
        lines.append(pmpi + "\n")
    lines.append(END)
    return "".join(lines)


def main():
    mode, path = sys.argv[1], sys.argv[2]
    with open(path) as f:
        text = f.read()
    head, tail = split(text)
    if mode == "names":
        print("\n".join(name for name, _ in declarations(head)))
        return 0
    if mode == "weak":
        print("/* Written by pmpi.py weak: every MPI_ name of mpi.h is weak, its PMPI_ twin strong. */")
        print("\n".join(f"#pragma weak MPI_{name}" for name, _ in declarations(head)))
        return 0
    wanted = head + block(head) + tail
    if mode == "write":
        with open(path, "w") as f:
            f.write(wanted)
        return 0
    if mode == "check":
        if wanted != text:
            print(f"{path}: the PMPI_ block is out of date: run python3 {sys.argv[0]} write {path}",
                  file=sys.stderr)
            return 1
        print(f"{path}: {len(declarations(head))} MPI_ functions, each declared as PMPI_ too")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
