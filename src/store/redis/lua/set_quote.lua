redis.call('SET', quoteKey, quote)
redis.call('PUBLISH', channel, notice_quote(quote))
return done('set')
