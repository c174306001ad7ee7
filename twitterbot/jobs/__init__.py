"""Long-running jobs that post their progress (see `twitterbot.progress`)."""
