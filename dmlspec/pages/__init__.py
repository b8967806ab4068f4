"""dmlspec.pages."""
