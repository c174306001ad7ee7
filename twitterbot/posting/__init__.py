"""The scheduled post: the tweets file, the roll and the pick, one run, and their commands."""
