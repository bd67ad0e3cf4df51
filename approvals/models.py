"""Models of approvals."""
