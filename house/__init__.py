"""What every package of the arena shares, below the referee: the settings table
(``house.settings``) and the folders a bot's archive and content hash leave out
(``house.build_output``). Standard library only: every bot and referee process imports it."""
