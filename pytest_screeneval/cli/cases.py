"""``screeneval cases import | export | retire``: the golden set in the store."""

from __future__ import annotations

import argparse
from pathlib import Path

from pytest_screeneval.cli.common import open_store, out
from pytest_screeneval.errors import ScreenevalError
from pytest_screeneval.golden.load import DEFAULT_LIMITS, SizeLimits
from pytest_screeneval.settings.validators import non_empty

__all__ = [
    "cases_datasheet",
    "cases_datasheet_arguments",
    "cases_export",
    "cases_export_arguments",
    "cases_import",
    "cases_import_arguments",
    "cases_retire",
    "cases_retire_arguments",
]


def cases_import_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("folder", metavar="DIR", help="golden set folder (rubric.yaml, cases)")


def size_limits_from_ini() -> SizeLimits:
    """The size limits pytest would apply: the ini's values, else the defaults."""
    from pytest_screeneval.cli.locate import find_rootdir
    from pytest_screeneval.settings.validators import positive_int

    values = find_rootdir().values
    try:
        return SizeLimits(
            positive_int(
                values.get("screeneval_max_case_id_chars", DEFAULT_LIMITS.max_case_id_chars)
            ),
            positive_int(values.get("screeneval_max_input_chars", DEFAULT_LIMITS.max_input_chars)),
        )
    except argparse.ArgumentTypeError as exc:
        raise ScreenevalError(f"Invalid size limit in the ini file: {exc}.") from None


def cases_import(args: argparse.Namespace) -> int:
    from pytest_screeneval.golden.load import load_golden_set

    folder = Path(args.folder)
    # file names in messages as the user sees them: from here when the folder is below here
    inside = folder.resolve().is_relative_to(Path.cwd().resolve())
    golden = load_golden_set(
        folder.resolve(),
        relative_to=Path.cwd().resolve() if inside else None,
        limits=size_limits_from_ini(),
    )
    with open_store(args, create=True) as store:
        report = store.sync_golden_set(golden)
        where = store.masked_url
    parts = [
        f"{len(report.added)} added",
        f"{len(report.unchanged)} unchanged",
        f"{len(report.expectations_changed)} with new expectations",
        f"{len(report.ratings_changed)} with new ratings",
        f"{len(report.updated)} corrected",
        f"{len(report.retired)} retired",
    ]
    out(f"imported {len(golden.cases)} cases from {args.folder} into {where}: {', '.join(parts)}")
    if report.missing:
        out(
            f"{len(report.missing)} active case(s) in the store are not in {args.folder}: "
            f"{', '.join(report.missing)} (retire them with `screeneval cases retire`)"
        )
    return 0


def cases_export_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("folder", metavar="DIR", help="folder to write the golden set into")
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace files in DIR that differ from the store (edits there are lost)",
    )


def cases_export(args: argparse.Namespace) -> int:
    from pytest_screeneval.golden.write import write_golden_set

    with open_store(args) as store:
        golden = store.load_golden_set()
    folder = Path(args.folder)
    if folder.exists() and not folder.is_dir():
        raise ScreenevalError(
            f"Cannot export the golden set to {args.folder}: it is a file, not a folder."
        )
    try:
        write_golden_set(golden, folder, force=args.force)
    except OSError as exc:  # a name too long, no space, no permission
        where = str(exc.filename or "")
        shown = f" ({where})" if where and len(where) <= 100 else ""
        raise ScreenevalError(
            f"Cannot export the golden set to {args.folder}: {exc.strerror}{shown}."
        ) from None
    retired = len(golden.cases) - len(golden.active_cases)
    out(
        f"wrote rubric {golden.rubric.id}, the variants and {len(golden.cases)} cases "
        f"({retired} retired) to {args.folder}"
    )
    return 0


def cases_retire_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("case_id", metavar="CASE", help="the case id to retire")
    parser.add_argument("--by", required=True, type=non_empty, help="who retires it")


def cases_retire(args: argparse.Namespace) -> int:
    with open_store(args) as store:
        store.retire_case(args.case_id, by=args.by)
    out(f"retired case {args.case_id} (by {args.by}); its past scores stay in the store")
    return 0


def cases_datasheet_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "folder",
        metavar="DIR",
        nargs="?",
        help="a golden set folder (default: the golden set in the store)",
    )
    parser.add_argument("--json", metavar="PATH", help="also write the datasheet as JSON here")


def cases_datasheet(args: argparse.Namespace) -> int:
    import json

    from pytest_screeneval.report.datasheet import datasheet, datasheet_lines

    if args.folder:
        from pytest_screeneval.golden.load import load_golden_set

        golden = load_golden_set(Path(args.folder).resolve(), limits=size_limits_from_ini())
        records: dict[str, dict[str, object]] = {}
    else:
        with open_store(args, read_only=True) as store:
            golden = store.load_golden_set()
            records = store.case_records()
    sheet = datasheet(golden, records)
    for line in datasheet_lines(sheet):
        out(line)
    if args.json:
        try:
            Path(args.json).write_text(
                json.dumps(sheet, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
            )
        except OSError as exc:
            raise ScreenevalError(f"Cannot write {args.json} ({exc.strerror}).") from None
    return 0
