"""What every cloud resource of gpuplane's gets: lifecycle options (protect, retain), names within the
cloud's limits, and the pip extra its SDK comes from."""
