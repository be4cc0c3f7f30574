"""A synthetic class for measuring the similarity step (course.grading.similarity): independent work, and planted
copies disguised the way students disguise them.

An independent student answers each code cell with the instructor's solution or one of the course's correct
alternatives (corpus.py, every set), at random, in a style of their own (two of the disguises below, at random:
students who start from the same idea still write it differently), and writes their own written answers (sentences
drawn from a vocabulary, so two students' prose share words, not passages). A planted copy takes another student's
answers and disguises each code cell with several of DISGUISES: variables renamed, functions reordered, comments and
docstrings rewritten, blank lines and dead code added, a helper extracted, a loop turned into a comprehension; its
written answers keep the original's sentences with a few words changed.
"""

from __future__ import annotations

import ast
import copy
import random
from collections.abc import Callable
from dataclasses import dataclass

from course.grading.similarity import Answers, answers_of
from course.measuring.grader_accuracy import corpora
from course.samples import sample_notebook

VOCABULARY = ("attention", "weights", "softmax", "query", "key", "value", "scaled", "because", "the", "model", "each",
              "token", "learns", "position", "head", "layer", "mask", "future", "so", "that", "we", "see", "gradient",
              "large", "small", "sum", "rows", "columns", "output", "input", "train", "loss", "falls", "rises", "when",
              "dimension", "embedding", "norm", "residual", "stable", "saturates", "uniform", "sharp", "focus", "on")


STYLE, DISGUISE = 2, 4  # disguises of an independent student's own style, and of a copy

# ------------------------------------------------------------------ disguises of one code cell


class Renamer(ast.NodeTransformer):
    """Give every name a function binds (its arguments but self, its assignments, its loop variables) a new one."""

    def __init__(self, rng: random.Random):
        self.rng, self.names = rng, {}

    def new_name(self, old: str) -> str:
        return self.names.setdefault(old, f"{self.rng.choice(('tmp', 'val', 'res', 'arr', 'out'))}_{len(self.names)}")

    def visit_FunctionDef(self, node):
        self.generic_visit(node)  # functions defined inside it first
        arguments = [a for a in (*node.args.args, *node.args.kwonlyargs) if a.arg != "self"]
        bound = {a.arg for a in arguments} | {
            n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        mapping = {old: self.new_name(old) for old in sorted(bound)}
        for argument in arguments:
            argument.arg = mapping[argument.arg]
        for child in ast.walk(node):
            if isinstance(child, ast.Name) and child.id in mapping:
                child.id = mapping[child.id]
        return node


def renamed(tree: ast.Module, rng: random.Random) -> ast.Module:
    return Renamer(rng).visit(tree)


def reordered(tree: ast.Module, rng: random.Random) -> ast.Module:
    """Top-level definitions, and the methods of each class but the first, in another order."""
    defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    others = [n for n in tree.body if n not in defs]
    rng.shuffle(defs)
    tree.body = others + defs
    for node in defs:
        if isinstance(node, ast.ClassDef) and len(node.body) > 2:
            rest = node.body[1:]
            rng.shuffle(rest)
            node.body = node.body[:1] + rest
    return tree


def redocumented(tree: ast.Module, rng: random.Random) -> ast.Module:
    """Every docstring rewritten (comments are gone once the cell is unparsed)."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and ast.get_docstring(node) is not None:
            node.body[0] = ast.Expr(ast.Constant(" ".join(rng.choice(VOCABULARY) for _ in range(8)).capitalize() + "."))
    return tree


def padded(tree: ast.Module, rng: random.Random) -> ast.Module:
    """Dead code at the top of every function: an unused variable and a branch never taken."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            dead = ast.parse(f"unused_{rng.randrange(100)} = {rng.randrange(1000)}\nif False:\n    print('debug')").body
            start = 1 if ast.get_docstring(node) is not None else 0
            node.body[start:start] = dead
    return tree


def with_helper(tree: ast.Module, rng: random.Random) -> ast.Module:
    """The body of the first top-level function moved into a helper it calls."""
    for index, node in enumerate(tree.body):
        if isinstance(node, ast.FunctionDef) and not node.args.vararg and not node.args.kwarg:
            helper = ast.FunctionDef(name=f"_{node.name}_impl", args=copy.deepcopy(node.args), body=node.body,
                                     decorator_list=[],
                                     returns=None)
            arguments = [ast.Name(a.arg, ast.Load()) for a in node.args.args]
            call = ast.Call(ast.Name(helper.name, ast.Load()), arguments, [])
            wrapper = ast.FunctionDef(name=node.name, args=node.args, body=[ast.Return(call)],
                                      decorator_list=node.decorator_list, returns=node.returns)
            tree.body[index:index + 1] = [helper, wrapper]
            break
    return tree


def comprehended(tree: ast.Module, rng: random.Random) -> ast.Module:
    """`xs = []` followed by `for ...: xs.append(e)` becomes `xs = [e for ...]`, wherever it occurs."""
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for i in range(len(body) - 1):
            first, loop = body[i], body[i + 1]
            if (isinstance(first, ast.Assign) and isinstance(first.value, ast.List) and not first.value.elts
                    and len(first.targets) == 1 and isinstance(first.targets[0], ast.Name)
                    and isinstance(loop, ast.For) and len(loop.body) == 1 and not loop.orelse
                    and isinstance(loop.body[0], ast.Expr) and isinstance(loop.body[0].value, ast.Call)
                    and isinstance(loop.body[0].value.func, ast.Attribute) and loop.body[0].value.func.attr == "append"
                    and isinstance(loop.body[0].value.func.value, ast.Name)
                    and loop.body[0].value.func.value.id == first.targets[0].id):
                first.value = ast.ListComp(loop.body[0].value.args[0],
                                           [ast.comprehension(loop.target, loop.iter, [], 0)])
                body[i + 1] = ast.Pass()
    return tree


DISGUISES: dict[str, Callable[[ast.Module, random.Random], ast.Module]] = {
    "renamed": renamed, "reordered": reordered, "redocumented": redocumented, "padded": padded,
    "helper": with_helper, "comprehension": comprehended}


def disguised(source: str, rng: random.Random, count: int) -> str:
    """`source` with `count` disguises applied and a blank line after every line (the source itself if it does not
    parse)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    for name in rng.sample(sorted(DISGUISES), count):
        tree = ast.fix_missing_locations(DISGUISES[name](tree, rng))
    return "\n\n".join(ast.unparse(tree).split("\n")) + "\n"


# ------------------------------------------------------------------ the class


@dataclass(frozen=True)
class PlantedClass:
    """A synthetic class: every student's answers, and the planted (copy, original) pairs."""

    answers: dict[str, Answers]
    planted: tuple[tuple[str, str], ...]


def prose(rng: random.Random, sentences: int = 4) -> str:
    return " ".join(" ".join(rng.choice(VOCABULARY) for _ in range(12)).capitalize() + "." for _ in range(sentences))


def independent_answers(assignment: str, rng: random.Random) -> Answers:
    """One student's own work: per code cell the solution or one of its correct alternatives; their own prose."""
    solution = answers_of(sample_notebook(assignment, "perfect"))
    alternatives: dict[str, list] = {}
    for corpus in corpora(assignment):
        for edit in corpus.alternatives:
            alternatives.setdefault(edit.cell, []).append(edit)
    code = {}
    for cell, source in solution.code.items():
        choice = rng.choice([None, *alternatives.get(cell, [])])
        code[cell] = disguised(choice.apply(source) if choice else source, rng, count=STYLE)
    return Answers(code, {cell: prose(rng) for cell in solution.text})


def copied(original: Answers, rng: random.Random) -> Answers:
    """A disguised copy of `original`: each code cell disguised; a few words of each written answer changed."""
    def reworded(text: str) -> str:
        words = text.split()
        for index in rng.sample(range(len(words)), k=min(3, len(words))):
            words[index] = rng.choice(VOCABULARY)
        return " ".join(words)
    return Answers({cell: disguised(source, rng, DISGUISE) for cell, source in original.code.items()},
                   {cell: reworded(text) for cell, text in original.text.items()})


def planted_class(assignment: str, students: int, copies: int, seed: int = 0) -> PlantedClass:
    """`students` independent students, then `copies` more, each a disguised copy of one of them."""
    rng = random.Random(seed)
    answers = {f"student{i:03d}": independent_answers(assignment, rng) for i in range(students)}
    originals = rng.sample(sorted(answers), copies)
    planted = []
    for i, original in enumerate(originals):
        copy = f"copier{i:03d}"
        answers[copy] = copied(answers[original], rng)
        planted.append((copy, original))
    return PlantedClass(answers, tuple(planted))
