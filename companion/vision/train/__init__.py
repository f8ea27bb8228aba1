"""Training tools for the vision models (run in a throwaway venv; never imported at runtime)."""
