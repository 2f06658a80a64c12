"""The stack program and what spans a whole stack: fleets over regions, capacity and cost, lifecycle
options, cloud name limits, pip extras."""
