"""The typed contract of ``metrics/<trainer>/trainer.yaml``: everything that names a trainer, so that adding one
needs no code. Its metrics sit beside it, one file per key."""

from __future__ import annotations

from typing import Annotated

from pydantic import ConfigDict, Field

from .text import IDENT, RELEASE, Strict, Text

Release = Annotated[str, Field(pattern=RELEASE)]


class Span(Strict):
    """A range of TRL releases [from, to); ``to: null`` means up to the newest release."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
    from_: Release = Field(alias="from", description="First release of the range.")
    to: Release | None = Field(None, description="First release after the range (null: still so today).")


class TrainerClass(Span):
    """The trainer's class in a range of releases (it may be renamed or moved)."""

    name: str = Field(pattern=r"^[A-Z]\w*$", description="The class, e.g. `GRPOTrainer`.")
    module: str = Field(pattern=r"^[a-z_][\w.]*$", description="Where users import it from, e.g. `trl`.")
    config: str = Field(pattern=r"^[A-Z]\w*$", description="Its configuration class, e.g. `GRPOConfig`.")

    @property
    def import_line(self) -> str:
        return f"from {self.module} import {self.name}, {self.config}"


class Category(Strict):
    """A group of keys on the trainer's index page, in reading order."""

    id: str = Field(pattern=IDENT, description="What metric files name in `category`.")
    title: Text


class Default(Span):
    value: str | None = Field(description="The default in these releases, as Python source (`0.0`, `\"dapo\"`); "
                                          "null where the configuration has no such setting yet.")


class Crucial(Strict):
    """A setting whose value changes what the curves mean; its default is shown for each release line."""

    option: str = Field(pattern=r"^[a-z_][a-z0-9_]*$", description="The field of the configuration class.")
    defaults: list[Default] = Field(min_length=1, description="Its default per range of releases, oldest first, "
                                                              "covering every release of the trainer.")
    why: Text = Field(description="What it changes in the curves, in one or two sentences.")


class Trainer(Strict):
    """One TRL trainer: its class per release, how its index page groups and introduces its keys, and the reading
    order printed on its cheat-sheet."""

    id: str = Field(pattern=IDENT, description="Lowercase name; the folder of the trainer's metrics.")
    title: str = Field(description="Short name in navigation and titles, e.g. `GRPO` (not translated).")
    order: int = Field(ge=1, description="Position among the trainers on the home page and in the navigation.")
    classes: list[TrainerClass] = Field(min_length=1, description="The class per range of releases, oldest first, "
                                                                  "without gaps; the last one is open or ends "
                                                                  "where the trainer was removed.")
    intro: Text = Field(description="The first paragraph of the trainer's index page: what the trainer does and "
                                    "what its curves are for.")
    categories: list[Category] = Field(min_length=1, description="Groups of keys, in reading order.")
    strip: Text | None = Field(None, description="The 'read the curves in this order' line of the index page and "
                                                 "the cheat-sheet (needed when a metric of the trainer has a "
                                                 "`cheatsheet` entry).")
    evaluation: Text | None = Field(None, description="What the trainer logs during evaluation (its `eval_` keys), "
                                                      "in a sentence or two on the index page; omit it when the "
                                                      "trainer has no evaluation loop.")
    crucial: list[Crucial] = Field([], description="Settings whose value changes what the curves mean.")

    @property
    def since(self) -> str:
        return self.classes[0].from_

    @property
    def until(self) -> str | None:
        return self.classes[-1].to

    def category_ids(self) -> list[str]:
        return [c.id for c in self.categories]
