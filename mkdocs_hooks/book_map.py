"""MkDocs hook: the book map (book section -> kafka_lite module -> notebook -> lab), and the book's
section titles beside ours in every chapter guide.

No Kafka twin: docs tooling. Everything here is read from the project itself when the docs are built,
so the map cannot drift from the code:

- the book's table of contents, in its printed (simplified) characters with our English titles, from
  ``chapters/book.toml``;
- each module's sections, from the ``Book:`` line of its header docstring (``chapter 6, 6.1.2
  (writing to a segment), 6.1.3 ...``: every section number it names, ranges such as ``6.1.1-6.1.4``
  expanded over the book's table of contents);
- each notebook's sections, from the kafka_lite modules it imports, kept to its own chapter (the
  ``chNN_`` of its folder);
- each lab's sections, from the modules it asks you to write (``files`` in ``labs/*/lab.toml``).

Pages use four markers: ``<!-- book-map -->`` (the whole map), ``<!-- chapter-plan -->`` (each
chapter's size: its modules' lines, notebooks and labs, to plan a course by),
``<!-- book-sections: N -->`` (the sections of chapter N, Chinese beside English) and, in a chapter after the book's last (chapter 11,
security), ``<!-- beyond-the-book -->`` (a note saying so, where a book chapter has its sections;
``<!-- beyond-the-book: a tool -->`` for a chapter whose modules are a tool beside Kafka, chapter 13's). A guide's heading that starts with a section number,
``## 6.1.2 Writing to the log``, gets the book's title appended: ``· 写入日志``. A guide is its
chapter's ``index.md`` and, for a chapter too long for one page, the pages of its folder that the
index links to (``chapters/ch06_storage/log.md``): see ``guide_pages``. In both tables a section the
guides have a heading for links to that heading, on whichever of its guide's pages holds it.
"""

from __future__ import annotations

import ast
import importlib
import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from markdown.extensions.toc import slugify

ROOT = Path(__file__).resolve().parents[1]
BOOK_FILE = Path("chapters") / "book.toml"

# A module whose Book line says it is used everywhere (``used throughout``, ``used by every
# component``, ``wherever a response carries error_code``) belongs to no one section: the map lists it
# once, apart.
CROSS_CUTTING = re.compile(r"\bused (?:throughout|by every)\b|\bwherever\b", re.IGNORECASE)
# A section number or a range of them: 6.1, 6.1.2, 6.1.1-6.1.4. Not a version ("Kafka 0.11", "v2").
DOTTED = re.compile(r"(?<![\w.])(?<!Kafka )(\d+(?:\.\d+)+)(?:\s*-\s*(\d+(?:\.\d+)+))?(?![\w]|\.\d)")
# Whole chapters: "chapter 7 (...)", "chapters 2, 4-7"; dotted numbers in the list are DOTTED's.
CHAPTERS = re.compile(r"\bchapters?\s+([\d.,\s-]+)")
HEADER_FIELD = re.compile(r"^[A-Z][\w ]*:")


@dataclass(frozen=True)
class Section:
    number: str
    zh: str
    en: str

    @property
    def key(self) -> tuple[int, ...]:
        return tuple(int(part) for part in self.number.split("."))

    @property
    def chapter(self) -> int:
        return self.key[0]


@dataclass
class Book:
    title: str
    author: str
    sections: dict[str, Section]  # in the book's order

    def chapter_sections(self, chapter: int) -> list[Section]:
        return [s for s in self.sections.values() if s.chapter == chapter]

    def expand(self, first: str, last: str, where: str) -> list[str]:
        """The sections from ``first`` to ``last`` at ``first``'s depth, in the book's order."""
        for number in (first, last):
            self.require(number, where)
        a, b = self.sections[first].key, self.sections[last].key
        if len(a) != len(b) or a[:-1] != b[:-1] or a > b:
            raise ValueError(f"{where}: {first}-{last} is not a range of sibling sections of the book")
        return [s.number for s in self.sections.values() if len(s.key) == len(a) and a <= s.key <= b]

    def require(self, number: str, where: str) -> None:
        if number not in self.sections:
            raise ValueError(f"{where}: names section {number}, which the book does not have")


def load_book(path: Path | None = None) -> Book:
    path = path or ROOT / BOOK_FILE
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{path}: not valid TOML: {e}") from None
    sections: dict[str, Section] = {}
    for i, entry in enumerate(data.get("sections", [])):
        missing = [k for k in ("number", "zh", "en") if not entry.get(k)]
        if missing:
            raise ValueError(f"{path}: section entry {i} has no {', '.join(missing)}")
        number = entry["number"]
        if not re.fullmatch(r"\d+(\.\d+)*", number):
            raise ValueError(f"{path}: section entry {i}: {number!r} is not a section number like 6.1.2")
        if number in sections:
            raise ValueError(f"{path}: section {number} is listed twice")
        sections[number] = Section(number, entry["zh"], entry["en"])
    if not sections:
        raise ValueError(f"{path}: no sections")
    for key in ("title", "author"):
        if not data.get(key):
            raise ValueError(f"{path}: no {key}")
    return Book(data["title"], data["author"], sections)


def book_line(source: str) -> str | None:
    """The text of the ``Book:`` field of a module's header docstring, continuation lines joined."""
    try:
        doc = ast.get_docstring(ast.parse(source)) or ""
    except SyntaxError:
        return None
    lines = doc.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("Book:"):
            text = [line[len("Book:") :].strip()]
            for more in lines[i + 1 :]:
                if not more.strip() or HEADER_FIELD.match(more):
                    break
                text.append(more.strip())
            return " ".join(text)
    return None


def sections_named(text: str, book: Book, where: str) -> list[str]:
    """Every section a Book line names, most specific per chapter, in the book's order."""
    found: set[str] = set()
    for m in DOTTED.finditer(text):
        first, last = m.group(1), m.group(2)
        if int(first.split(".")[0]) not in {s.chapter for s in book.sections.values()}:
            continue  # a version number ("0.11"), not a section
        found.update(book.expand(first, last, where) if last else [first])
        if not last:
            book.require(first, where)
    # "beyond the book: chapter 12 (KRaft)" names kafka_lite's own chapter after the book's last (its
    # guide), not a chapter of the book: no section of the book to map it to.
    own_chapters = text.startswith("beyond the book")
    last = max(s.chapter for s in book.sections.values())
    for m in CHAPTERS.finditer(text):
        for item in m.group(1).split(","):
            whole = re.fullmatch(r"\s*(\d+)(?:\s*-\s*(\d+))?\s*", item)
            if whole is None:
                continue  # a section (DOTTED's), or not a number
            lo, hi = whole.groups()
            for chapter in range(int(lo), int(hi or lo) + 1):
                if own_chapters and chapter > last:
                    continue
                book.require(str(chapter), where)
                found.add(str(chapter))
    return most_specific(found, book)


def most_specific(numbers: set[str], book: Book) -> list[str]:
    """Drop a bare chapter number when a section of that chapter is named too."""
    chapters_with_sections = {n.split(".")[0] for n in numbers if "." in n}
    kept = {n for n in numbers if "." in n or n not in chapters_with_sections}
    return sorted(kept, key=lambda n: book.sections[n].key)


@dataclass
class Module:
    path: str  # kafka_lite/log/log_segment.py
    book: str  # the Book line
    sections: list[str]
    cross_cutting: bool


@dataclass
class Notebook:
    path: str  # chapters/ch06_storage/log_segments.ipynb
    name: str  # log_segments
    chapter: int
    modules: list[str]
    sections: list[str]


@dataclass
class Lab:
    number: int
    title: str
    readme: str  # labs/lab02_log_segment/README.md
    files: list[str]
    sections: list[str]
    time: str = ""  # what its handout says it takes: "about 2 hours"

    own_chapter: int | None = None  # a chapter after the book's last that its files' Book lines name

    @property
    def home_chapter(self) -> int | None:
        """The chapter after the book's last that its files belong to, if they name one (a KRaft
        lab whose code also reads chapter 7's is chapter 12's); else the chapter most of the
        sections it writes code for belong to (the later on a tie); None for a lab whose code
        names neither."""
        if self.own_chapter is not None:
            return self.own_chapter
        counts: dict[int, int] = {}
        for number in self.sections:
            chapter = int(number.split(".")[0])
            counts[chapter] = counts.get(chapter, 0) + 1
        return max(counts, key=lambda c: (counts[c], c)) if counts else None


@dataclass
class Row:
    section: Section
    modules: list[str] = field(default_factory=list)
    notebooks: list[Notebook] = field(default_factory=list)
    labs: list[Lab] = field(default_factory=list)


@dataclass
class BookMap:
    book: Book
    rows: dict[str, Row]  # every section of the book, in its order
    throughout: list[Module]  # modules used everywhere, tied to no section
    beyond: list[Module]  # modules whose Book line names no section (Kafka after the book)
    modules: dict[str, Module]
    notebooks: list[Notebook]
    labs: list[Lab]
    guides: dict[int, str]  # chapter -> chapters/chNN_*/index.md
    # section -> the guide page and anchor of the first heading that starts with its number
    anchors: dict[str, str] = field(default_factory=dict)


def read_modules(root: Path, book: Book) -> dict[str, Module]:
    modules = {}
    for path in sorted((root / "kafka_lite").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        text = book_line(path.read_text(encoding="utf-8"))
        if text is None:
            continue  # no Book line: tooling with no place in the book (its header says so)
        modules[rel] = Module(rel, text, sections_named(text, book, rel), bool(CROSS_CUTTING.search(text)))
    return modules


def module_file(root: Path, name: str) -> str | None:
    base = root / Path(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate.relative_to(root).as_posix()
    return None


def imported_modules(root: Path, source: str, where: str) -> list[str]:
    """The kafka_lite files a piece of code imports from, each name resolved to where it is defined."""
    code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
    try:
        tree = ast.parse(code)
    except SyntaxError as e:
        raise ValueError(f"{where}: cannot read its imports: {e}") from None
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [(a.name, None) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [(node.module, a.name) for a in node.names]
        else:
            continue
        for module, name in names:
            if module.split(".")[0] != "kafka_lite":
                continue
            path = None
            if name is not None:
                path = module_file(root, f"{module}.{name}")  # a submodule
                if path is None:
                    obj = getattr(importlib.import_module(module), name, None)
                    defined_in = getattr(obj, "__module__", None) or ""
                    if defined_in.split(".")[0] == "kafka_lite":
                        path = module_file(root, defined_in)
            path = path or module_file(root, module)
            if path is None:
                raise ValueError(f"{where}: imports {module}, which is not a file under kafka_lite/")
            if path not in found:
                found.append(path)
    return found


def read_notebooks(root: Path, book: Book, modules: dict[str, Module]) -> list[Notebook]:
    notebooks = []
    for path in sorted((root / "chapters").glob("ch*_*/*.ipynb")):
        rel = path.relative_to(root).as_posix()
        chapter = int(re.match(r"ch(\d+)_", path.parent.name).group(1))
        if str(chapter) not in book.sections:
            # A chapter after the book's last (security): its notebooks belong to no section.
            notebooks.append(Notebook(rel, path.stem, chapter, [], []))
            continue
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        source = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        imports = imported_modules(root, source, rel)
        sections = {
            number
            for imported in imports
            if imported in modules and not modules[imported].cross_cutting
            for number in modules[imported].sections
            if book.sections[number].chapter == chapter
        }
        notebooks.append(
            Notebook(rel, path.stem, chapter, imports, most_specific(sections or {str(chapter)}, book))
        )
    return notebooks


def read_labs(root: Path, book: Book, modules: dict[str, Module]) -> list[Lab]:
    labs = []
    for toml in sorted((root / "labs").glob("lab*_*/lab.toml")):
        rel = toml.relative_to(root).as_posix()
        data = tomllib.loads(toml.read_text(encoding="utf-8"))
        missing = [k for k in ("number", "title", "files") if k not in data]
        if missing:
            raise ValueError(f"{rel}: no {', '.join(missing)}")
        unknown = [f for f in data["files"] if f not in modules]
        if unknown:
            raise ValueError(f"{rel}: {', '.join(unknown)} has no Book line (or does not exist)")
        sections = {n for f in data["files"] for n in modules[f].sections}
        readme = (toml.parent / "README.md").relative_to(root).as_posix()
        # The latest such chapter, should its files name two (none does).
        own = sorted({c for f in data["files"] if (c := own_chapter(modules[f].book)) is not None})
        labs.append(
            Lab(
                data["number"],
                data["title"],
                readme,
                list(data["files"]),
                most_specific(sections, book),
                str(data.get("time", "")),
                own[-1] if own else None,
            )
        )
    return sorted(labs, key=lambda lab: lab.number)


def build_book_map(root: Path = ROOT) -> BookMap:
    book = load_book(root / BOOK_FILE)
    modules = read_modules(root, book)
    notebooks = read_notebooks(root, book, modules)
    labs = read_labs(root, book, modules)
    rows = {number: Row(section) for number, section in book.sections.items()}
    for module in modules.values():
        if not module.cross_cutting:
            for number in module.sections:
                rows[number].modules.append(module.path)
    for notebook in notebooks:
        for number in notebook.sections:
            rows[number].notebooks.append(notebook)
    for lab in labs:
        for number in lab.sections:
            rows[number].labs.append(lab)
    throughout = [m for m in modules.values() if m.cross_cutting]
    beyond = [m for m in modules.values() if not m.cross_cutting and not m.sections]
    guides = {
        int(re.match(r"ch(\d+)_", path.parent.name).group(1)): path.relative_to(root).as_posix()
        for path in sorted((root / "chapters").glob("ch*_*/index.md"))
    }
    anchors = section_anchors(root, book)
    return BookMap(book, rows, throughout, beyond, modules, notebooks, labs, guides, anchors)


# A link from a guide's index to a page beside it: "[6.1 The log](log.md)", "(log.md#613-rolling-segments)".
SIBLING_PAGE = re.compile(r"\]\(([\w-]+\.md)(?:#[^)\s]*)?\)")


def guide_pages(root: Path = ROOT) -> list[str]:
    """Every page of every chapter guide: each chapter's ``index.md``, then the pages of its folder
    that the index links to, in the order it first links to them (a long guide is split into pages
    per section group, and its index is their map). Other pages of a folder, such as chapter 1's
    concepts page, are pages of their own, not parts of the guide."""
    pages = []
    for index in sorted((root / "chapters").glob("*/index.md")):
        pages.append(index.relative_to(root).as_posix())
        linked = dict.fromkeys(SIBLING_PAGE.findall(index.read_text(encoding="utf-8")))
        for name in linked:
            page = index.parent / name
            if name not in ("index.md", "questions.md") and page.is_file():
                pages.append(page.relative_to(root).as_posix())
    return pages


# ---- Markdown -------------------------------------------------------------------------------------


def _short(path: str) -> str:
    """``kafka_lite/log/log_segment.py`` -> ``log/log_segment.py``; a package's ``__init__.py`` -> ``zk/``."""
    return "`" + path.removeprefix("kafka_lite/").removesuffix("__init__.py") + "`"


def _title(page: str) -> str:
    """A page's title, its first line's heading: ``Chapter 11: Security``."""
    return (ROOT / page).read_text(encoding="utf-8").splitlines()[0].lstrip("# ")


READING_TIME = re.compile(r"<!-- reading-time: (.+?) -->")


def reading_time(page: str, root: Path = ROOT) -> str:
    """The time a chapter's guide gives for reading it, its notebooks and the methods it names
    first, from its ``<!-- reading-time: ... -->`` line. Every chapter guide has one, so the plan
    never shows a chapter without its time."""
    found = READING_TIME.search((root / page).read_text(encoding="utf-8"))
    if found is None:
        raise ValueError(f"{page}: no <!-- reading-time: ... --> line; the book map's plan needs one")
    return found.group(1)


def _cell(items: list[str]) -> str:
    return "<br>".join(items) if items else ""


def render_book_map(book_map: BookMap, base: str = "") -> str:
    """The map as Markdown, one table per chapter; ``base`` is the path from the page to the docs root."""
    out = []
    for section in book_map.book.sections.values():
        if "." in section.number:
            continue
        chapter = section.chapter
        sections = book_map.book.chapter_sections(chapter)
        out.append(f"## Chapter {chapter} · {section.zh} · {section.en} {{#chapter-{chapter}}}\n")
        guide = book_map.guides.get(chapter)
        if guide:
            out.append(f"The guide: [chapter {chapter}]({base}{guide}).\n")
        if not any(book_map.rows[s.number].modules for s in sections):
            out.append("No module's header names a section of this chapter: the guide says what kafka_lite")
            out.append("has for it, and what is not yet there.\n")
            out.append("| § | 《Kafka技术内幕》 | in English |")
            out.append("|---|---|---|")
            out.extend(f"| {s.number} | {s.zh} | {s.en} |" for s in sections)
            out.append("")
            continue
        out.append("| § | 《Kafka技术内幕》 | in English | kafka_lite | notebook | lab |")
        out.append("|---|---|---|---|---|---|")
        for s in sections:
            row = book_map.rows[s.number]
            notebooks = [f"[{n.name}]({base}{n.path})" for n in row.notebooks]
            labs = [f"[lab {lab.number}]({base}{lab.readme})" for lab in row.labs]
            number = f"**{s.number}**" if "." not in s.number else s.number
            if s.number in book_map.anchors:
                number = f"[{number}]({base}{book_map.anchors[s.number]})"
            out.append(
                f"| {number} | {s.zh} | {s.en} | {_cell([_short(m) for m in row.modules])} | "
                f"{_cell(notebooks)} | {_cell(labs)} |"
            )
        out.append("")
    out.append("## Used throughout {#throughout}\n")
    out.append("These modules serve every chapter rather than one section:\n")
    out.append("| kafka_lite | its header's Book line |")
    out.append("|---|---|")
    for module in book_map.throughout:
        out.append(f"| {_short(module.path)} | {module.book} |")
    if book_map.beyond:
        out.append("\n## Beyond the book {#beyond}\n")
        later = sorted(c for c in book_map.guides if str(c) not in book_map.book.sections)
        if later:
            chapters = ", ".join(f"[{_title(book_map.guides[c])}]({base}{book_map.guides[c]})" for c in later)
            notebooks = [f"[{n.name}]({base}{n.path})" for n in book_map.notebooks if n.chapter in later]
            labs = [f"[lab {lab.number}]({base}{lab.readme})" for lab in book_map.labs if not lab.sections]
            last = max(s.chapter for s in book_map.book.sections.values())
            out.append(f"The book ends with chapter {last}. kafka_lite goes on with {chapters}")
            out.append(f"(notebooks: {', '.join(notebooks) or 'none'}; labs: {', '.join(labs) or 'none'}).\n")
        out.append("These modules are Kafka from after the book's 0.10:\n")
        out.append("| kafka_lite | its header's Book line |")
        out.append("|---|---|")
        for module in book_map.beyond:
            out.append(f"| {_short(module.path)} | {module.book} |")
    return "\n".join(out) + "\n"


OWN_CHAPTER = re.compile(r"^beyond the book[:,]\s*chapter (\d+)\b")


def own_chapter(book_line: str) -> int | None:
    """The chapter after the book's last a Book line puts its module in (``beyond the book: chapter
    12 (KRaft)``), or None (a module of the book's chapters, or of Kafka after 0.10 with no chapter
    of its own)."""
    m = OWN_CHAPTER.match(book_line)
    return int(m.group(1)) if m else None


def module_lines(root: Path, path: str) -> int:
    """Every line of a module, its docstrings and comments included: they are read too."""
    return len((root / path).read_text(encoding="utf-8").splitlines())


def render_chapter_plan(book_map: BookMap, base: str = "", root: Path = ROOT) -> str:
    """One row per chapter: the modules whose Book line names its sections (a module serving two
    chapters counts in both) and their lines, its notebooks, and its labs with the time each
    handout gives (a lab listed once, under its ``home_chapter``). Each chapter after the book's last
    has its own row too, and the rest of Kafka after 0.10 one more."""
    last = max(s.chapter for s in book_map.book.sections.values())
    later = sorted(c for c in book_map.guides if c > last)
    rows: list[tuple[str, str, list[str], list[Notebook], list[Lab]]] = []
    for section in book_map.book.sections.values():
        if "." in section.number:
            continue
        chapter = section.chapter
        modules = [
            m.path
            for m in book_map.modules.values()
            if not m.cross_cutting and any(book_map.book.sections[n].chapter == chapter for n in m.sections)
        ]
        guide = book_map.guides.get(chapter)
        name = f"[{chapter} · {section.en}]({base}{guide})" if guide else f"{chapter} · {section.en}"
        notebooks = [n for n in book_map.notebooks if n.chapter == chapter]
        labs = [lab for lab in book_map.labs if lab.home_chapter == chapter]
        rows.append((name, reading_time(guide, root) if guide else "", modules, notebooks, labs))
    # Each chapter after the book's last has a row of its own: the modules whose Book line puts
    # them in it, its notebooks and labs; the rest of Kafka after 0.10 (0.11's transactions and
    # idempotence, read in chapter 10's guide) shares one row.
    for chapter in later:
        guide = book_map.guides[chapter]
        rows.append(
            (
                f"[{chapter} · {_title(guide).split(': ', 1)[1]}]({base}{guide})",  # "Chapter 12: KRaft..."
                reading_time(guide, root),
                [m.path for m in book_map.beyond if own_chapter(m.book) == chapter],
                [n for n in book_map.notebooks if n.chapter == chapter],
                [lab for lab in book_map.labs if lab.home_chapter == chapter],
            )
        )
    rest = [m.path for m in book_map.beyond if own_chapter(m.book) not in later]
    if rest:
        rows.append(
            (
                f"[Beyond the book]({base}book_map.md#beyond): Kafka after 0.10 in no chapter of its own",
                "in chapter 10's",
                rest,
                [],
                [lab for lab in book_map.labs if lab.home_chapter is None],
            )
        )
    out = ["| chapter | reading | modules | lines | notebooks | labs |", "|---|---|---:|---:|---|---|"]
    for name, reading, modules, notebooks, labs in rows:
        lines = sum(module_lines(root, m) for m in modules)
        shown_notebooks = [f"[{n.name}]({base}{n.path})" for n in notebooks]
        shown_labs = [f"[lab {lab.number}]({base}{lab.readme}) ({lab.time})" for lab in labs]
        out.append(
            f"| {name} | {reading} | {len(modules)} | {lines:,} | {_cell(shown_notebooks)} | {_cell(shown_labs)} |"
        )
    shared = sum(module_lines(root, m.path) for m in book_map.throughout)
    out.append("")
    out.append(
        f"The {len(book_map.throughout)} modules used throughout ({shared:,} lines) are in no row. A "
        "module's lines are all of them, its docstrings and comments included; a chapter's guide "
        "names the methods to read first."
    )
    return "\n".join(out)


def render_chapter_sections(
    book: Book, chapter: int, base: str = "../../", anchors: dict[str, str] | None = None
) -> str:
    """A chapter's sections, the book's titles beside ours, for the top of its guide; a section the
    guide has a heading for links to it (``anchors``, from ``section_anchors``)."""
    sections = book.chapter_sections(chapter)
    if not sections:
        raise ValueError(f"the book has no chapter {chapter}")
    out = ["| § | 《Kafka技术内幕》 | in English |", "|---|---|---|"]
    for s in sections:
        if "." not in s.number:
            out.append(f"| **{s.number}** | **{s.zh}** | **{s.en}** |")
            continue
        indent = "&emsp;" * (len(s.key) - 2)
        number = f"[{s.number}]({base}{anchors[s.number]})" if s.number in (anchors or {}) else s.number
        out.append(f"| {number} | {indent}{s.zh} | {indent}{s.en} |")
    out.append("")
    out.append(
        f"Section numbers and titles are the book's, 《{book.title}》 ({book.author}; Kafka 0.10's "
        f"source). The [book map]({base}book_map.md#chapter-{chapter}) gives, for each section, "
        "kafka_lite's modules, notebooks and labs."
    )
    return "\n".join(out)


BEYOND_MARKER = "<!-- beyond-the-book -->"
# A chapter after the book's last that is no part of Kafka: a tool that tests what the others built.
BEYOND_TOOL_MARKER = "<!-- beyond-the-book: a tool -->"


def render_beyond_the_book(book: Book, base: str = "../../", tool: bool = False) -> str:
    """The note a chapter after the book's last carries where a book chapter has its sections;
    with ``tool``, the note of a chapter whose modules are a tool beside Kafka (their headers name
    no section, but for the one a lab has you write, so the map lists only that one)."""
    last = max(s.chapter for s in book.sections.values())
    about = (
        "This chapter is kafka_lite's own: a tool that tests, from the outside, the cluster the "
        "other chapters built. Its modules are no part of Kafka, and the book map lists only the one "
        f"a lab has you write, with the chapter and its notebook, under [Beyond the book]({base}book_map.md#beyond)."
        if tool
        else "This chapter is Kafka after the book, which every Kafka user meets; its modules are "
        f"listed under [Beyond the book]({base}book_map.md#beyond) in the book map."
    )
    return (
        f'!!! note "Beyond the book"\n\n'
        f"    《{book.title}》 ends with chapter {last}, on Kafka 0.10's source. {about}"
    )


HEADING = re.compile(r"^(#{1,6}) (\d+(?:\.\d+)+)(?:-(\d+(?:\.\d+)+))? (.+?)$", re.MULTILINE)


def annotate_headings(markdown: str, book: Book, where: str) -> str:
    """``## 6.1.2 Writing to the log`` -> ``## 6.1.2 Writing to the log · 写入日志``."""

    def add_title(m: re.Match) -> str:
        first, last, text = m.group(2), m.group(3), m.group(4)
        numbers = book.expand(first, last, where) if last else [first]
        if not last:
            book.require(first, where)
        zh = " / ".join(book.sections[n].zh for n in numbers)
        anchor = ""
        if text.endswith("}") and "{" in text:  # keep attr_list's {#id} last
            text, anchor = text[: text.rindex("{")].rstrip(), " " + text[text.rindex("{") :]
        return f"{m.group(1)} {m.group(2)}{'-' + last if last else ''} {text} · {zh}{anchor}"

    # Fenced code is left alone: a "# 1.2 ..." line in a shell block is not a heading.
    parts = re.split(r"(^```.*?^```)", markdown, flags=re.MULTILINE | re.DOTALL)
    return "".join(p if p.startswith("```") else HEADING.sub(add_title, p) for p in parts)


def _outside_code(markdown: str) -> str:
    return "".join(
        p
        for p in re.split(r"(^```.*?^```)", markdown, flags=re.MULTILINE | re.DOTALL)
        if not p.startswith("```")
    )


def section_anchors(root: Path, book: Book) -> dict[str, str]:
    """Each section a guide has a heading for -> ``page#anchor`` of the first such heading, over every
    page of every guide (so a split guide's sections point at their own pages). The anchor is the id
    MkDocs gives the heading: its ``{#id}``, or the slug of its text as the page shows it, the book's
    title appended by ``annotate_headings`` (the slug drops its Chinese, not its Latin: ``API``)."""
    found: dict[str, str] = {}
    for page in guide_pages(root):
        shown = annotate_headings((root / page).read_text(encoding="utf-8"), book, page)
        for m in HEADING.finditer(_outside_code(shown)):
            first, last, text = m.group(2), m.group(3), m.group(4)
            explicit = re.search(r"\{#([\w-]+)\}\s*$", text)
            title = f"{first}{'-' + last if last else ''} {text}"
            anchor = explicit[1] if explicit else slugify(title, "-")
            for number in book.expand(first, last, page) if last else [first]:
                if number in book.sections:
                    found.setdefault(number, f"{page}#{anchor}")
    return found


# ---- MkDocs events --------------------------------------------------------------------------------

_built: BookMap | None = None
_guide_pages: set[str] | None = None


def on_pre_build(config) -> None:
    global _built, _guide_pages
    _built = build_book_map(ROOT)
    _guide_pages = set(guide_pages(ROOT))


def on_page_markdown(markdown: str, page, config, files) -> str:
    book_map = _built or build_book_map(ROOT)
    src = page.file.src_uri
    depth = src.count("/")
    base = "../" * depth
    if "<!-- book-map -->" in markdown:
        markdown = markdown.replace("<!-- book-map -->", render_book_map(book_map, base))
    if "<!-- chapter-plan -->" in markdown:
        markdown = markdown.replace("<!-- chapter-plan -->", render_chapter_plan(book_map, base))
    if BEYOND_MARKER in markdown:
        markdown = markdown.replace(BEYOND_MARKER, render_beyond_the_book(book_map.book, base))
    if BEYOND_TOOL_MARKER in markdown:
        markdown = markdown.replace(
            BEYOND_TOOL_MARKER, render_beyond_the_book(book_map.book, base, tool=True)
        )
    for m in re.finditer(r"<!-- book-sections: (\d+) -->", markdown):
        table = render_chapter_sections(book_map.book, int(m.group(1)), base, book_map.anchors)
        markdown = markdown.replace(m.group(0), table)
    if src.startswith("chapters/ch") and src in (_guide_pages or set(guide_pages(ROOT))):
        markdown = annotate_headings(markdown, book_map.book, src)
    return markdown
