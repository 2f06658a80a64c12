"""The GPU catalog and provider matrix are consistent data."""

from __future__ import annotations

import re

from gpuplane.catalog import ALIASES, GPUS, PLATFORMS, lookup


def test_seed_gpus_and_newer_ones_are_present() -> None:
    for name in ("t4", "v100", "p100", "a10", "a100", "a100-40gb", "a100-80gb", "l4", "h100", "h200"):
        assert lookup(name) is not None, name


def test_every_gpu_is_offered_somewhere() -> None:
    for gpu in GPUS.values():
        assert gpu.gcp or gpu.aws, gpu.name


def test_gcp_default_machines_exist_for_every_fixed_count() -> None:
    for gpu in GPUS.values():
        if gpu.gcp is None:
            continue
        for count in set(gpu.gcp.machines.values()) | set(gpu.gcp.attachable_counts):
            machine = gpu.gcp.default_machine(count)
            assert machine is not None and gpu.gcp.allows(machine, count), (gpu.name, count)


def test_aws_instance_types_look_like_ec2_types() -> None:
    ec2_type = re.compile(r"[a-z0-9]+(-[a-z0-9]+)?\.(metal|[0-9]*x?large)")  # family may be p6-b200, p6e-gb200
    for gpu in GPUS.values():
        if gpu.aws:
            assert all(ec2_type.fullmatch(i) for i in gpu.aws.instances), gpu.name
            assert all(n >= 1 for n in gpu.aws.instances.values())


def test_mig_profiles_fit_the_gpu_memory() -> None:
    for gpu in GPUS.values():
        for profile, count in gpu.mig_profiles.items():
            m = re.fullmatch(r"([1-7])g\.([0-9]+)gb", profile)
            assert m and int(m.group(2)) <= gpu.memory_gib, (gpu.name, profile)
            # Instances x compute slices never exceed the GPU's 7 slices.
            assert 1 <= count and count * int(m.group(1)) <= 7, (gpu.name, profile)
        assert set(gpu.gke_mig_profiles) <= set(gpu.mig_profiles)
    assert not lookup("t4").mig_capable and lookup("a100-40gb").mig_capable  # type: ignore[union-attr]


def test_aliases_point_at_entries() -> None:
    assert all(target in GPUS for target in ALIASES.values())


def test_platform_builders_are_importable_names() -> None:
    for p in PLATFORMS.values():
        module, func = p.builder.split(":")
        assert module.startswith("gpuplane.") and func.isidentifier()


def test_readme_shows_the_matrix_from_data() -> None:
    from gpuplane.catalog.platforms import matrix_markdown

    from .conftest import ROOT

    readme = (ROOT / "README.md").read_text()
    block = readme.split("<!-- matrix:start")[1].split("-->", 1)[1].split("<!-- matrix:end -->")[0].strip()
    assert block == matrix_markdown()


def test_config_reference_is_generated_from_the_models() -> None:
    from gpuplane.config.reference import reference

    from .conftest import ROOT

    assert (ROOT / "docs" / "config.md").read_text() == reference(), "run python scripts/render_docs.py"
    assert "| `maxNodes` |" in reference() and "Most nodes the autoscaler may add" in reference()
