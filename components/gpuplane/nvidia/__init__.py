"""The NVIDIA software each platform lacks (per the seed's matrix)."""
