"""Manager: the FastAPI app that ingests experience, trains in-device, publishes models."""
