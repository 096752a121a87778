local now = redis.call('TIME')
return {now[1], now[2], redis.call('GET', generation), redis.call('GET', sequence)}
