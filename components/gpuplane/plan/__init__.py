"""The offline plan: run the stack program under mocks and show the resource graph."""

from .runner import Plan, PlannedResource, plan_stack
from .stackfile import StackFile, load, stack_names

__all__ = ["Plan", "PlannedResource", "StackFile", "load", "plan_stack", "stack_names"]
