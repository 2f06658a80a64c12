"""Fleets as separate stacks: one per region plus a central one, and running them."""
