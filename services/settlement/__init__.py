"""The settlement fold: rounds and bets in, settlements, refunds and rejections out."""
