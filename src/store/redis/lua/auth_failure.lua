-- One failed authentication.
return count_failure(clock())
