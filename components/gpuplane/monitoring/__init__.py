"""GPU metrics wiring: scrape configs for Prometheus."""

from .scrape import JOB_NAME, ScrapeTarget, scrape_job, scrape_yaml, sd_label

__all__ = ["JOB_NAME", "ScrapeTarget", "scrape_job", "scrape_yaml", "sd_label"]
