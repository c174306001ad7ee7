"""Running unattended: the daemon, and the cron lines and systemd units for this checkout."""
