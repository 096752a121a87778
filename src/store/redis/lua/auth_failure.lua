return count_failure(clock())
