package app

// settingNames are the flags the Explorer's settings view shows of the
// registry, besides the ones every service shows (server.Base.Settings).
var settingNames = []string{"refresh"}
