"""Text encoders run in-process: small modules that import their heavy libraries only when a
model is loaded."""
