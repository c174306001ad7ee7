"""The delivery kernel: how every post reaches the networks, at most once.

The features above it (the scheduled post in `posting/`, replies in `replies/`, the jobs' reports
in `progress/`) each decide *what* to post and *when*, make a frozen `Post` (post.py) and hand it
to a `Delivery` (deliver.py) with their own kind of `Attempts` (attempts.py: how an attempt is
recorded and what a sent post moves on), which lives beside its sender. The kernel fits, prices
(budget.py), cuts threads (threads.py), sends (send.py: the one send step), records and settles
(settle.py: uncertain posts looked up) the same way for all of them. It stores each post whole
with its attempt, and every later run reads that stored post.
"""
