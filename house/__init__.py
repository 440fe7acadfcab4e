"""What every package of the arena shares, below the referee: the settings table
(``house.settings``). Standard library only: every bot and referee process imports it."""
