"""Rollout engine and episode driver tests."""
