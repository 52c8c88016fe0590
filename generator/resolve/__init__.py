"""Resolve: TRL releases as a dimension of the sources. Each documented release line gets one immutable edition,
with every metric as that release logs it (its variant applied) and what a page of the line shows."""
