#!/usr/bin/env python3
"""Independent reader for report.xlsx (used by tests/unit/report/xlsx_report_test.cpp).

Usage: read_xlsx.py FILE.xlsx [--prefix TEXT ...]

Prints one JSON object:
  sheets: sheet names in workbook order
  sheet.<name>: max_row, max_column, header (row 1 values), freeze_panes, auto_filter,
                columns: {header name: {types: cell types of the data rows (a final 'truncated: ' /
                'no rows' note row left out), first: value of row 2, first_type}},
                last_row (values of the last row), rows (sheets of at most 60 rows: [value, type] per cell)
  prefixed: every cell (any sheet) whose text starts with one of the --prefix values or with "'"
            followed by one: sheet, cell, type, value
Types are openpyxl's data_type ('n' number, 's' string, 'f' formula, 'b' bool), 'empty' for no value.
Exit status 2 when openpyxl is missing.
"""
import json
import sys

try:
    import openpyxl
except ImportError:  # the caller skips its test
    print("openpyxl is not installed", file=sys.stderr)
    sys.exit(2)


def cell_type(cell):
    return "empty" if cell.value is None else cell.data_type


def plain(value):
    if value is None or isinstance(value, (int, float, str, bool)):
        return value
    return str(value)


def main(argv):
    path = argv[1]
    prefixes = []
    i = 2
    while i < len(argv):
        if argv[i] == "--prefix" and i + 1 < len(argv):
            prefixes.append(argv[i + 1])
            i += 2
        else:
            i += 1
    wb = openpyxl.load_workbook(path)  # full mode: formulas stay formulas (data_type 'f')
    out = {"sheets": wb.sheetnames, "sheet": {}, "prefixed": []}
    for ws in wb.worksheets:
        rows = list(ws.iter_rows())
        header = [plain(c.value) for c in rows[0]] if rows else []
        while header and header[-1] is None:
            header.pop()
        data = rows[1:]
        if data and isinstance(data[-1][0].value, str) and data[-1][0].value.startswith(("truncated: ", "no rows")):
            data = data[:-1]  # the writer's note row is not data
        columns = {}
        for col, name in enumerate(header):
            if not isinstance(name, str):
                continue
            types = sorted({cell_type(r[col]) for r in data if col < len(r)})
            first = plain(rows[1][col].value) if len(rows) > 1 and col < len(rows[1]) else None
            first_type = cell_type(rows[1][col]) if len(rows) > 1 and col < len(rows[1]) else "empty"
            columns[name] = {"types": types, "first": first, "first_type": first_type}
        out["sheet"][ws.title] = {
            "max_row": ws.max_row,
            "max_column": ws.max_column,
            "header": header,
            "freeze_panes": ws.freeze_panes,
            "auto_filter": ws.auto_filter.ref,
            "columns": columns,
            "last_row": [plain(c.value) for c in rows[-1]] if rows else [],
        }
        if ws.max_row <= 60:  # small sheets in full: [[value, type], ...] per row
            out["sheet"][ws.title]["rows"] = [[[plain(c.value), cell_type(c)] for c in r] for r in rows]
        for r in rows:
            for c in r:
                v = c.value
                if not isinstance(v, str) or not prefixes:
                    continue
                text = v[1:] if v.startswith("'") else v
                if any(text.startswith(p) for p in prefixes):
                    out["prefixed"].append(
                        {"sheet": ws.title, "cell": c.coordinate, "type": c.data_type, "value": v})
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
