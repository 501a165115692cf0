"""The games' paytables: pure rules, no I/O. Validate a bet with `wager`, decide it with `verdict`,
credit it with `pay` (odds) or `payout` (a verdict); `par` has the probability accounting report."""

from .model import Dice, Discs, Odds, Outcome, Pick, Verdict, Wager, pay, payout
from .outcomes import GAMES, outcomes
from .paytable import odds_board, verdict, wager, wagers
from .sheet import ParSheet, par_sheet
from .sheet_render import render_json, render_text

__all__ = [
    "GAMES",
    "Dice",
    "Discs",
    "Odds",
    "Outcome",
    "ParSheet",
    "Pick",
    "Verdict",
    "Wager",
    "odds_board",
    "outcomes",
    "par_sheet",
    "pay",
    "payout",
    "render_json",
    "render_text",
    "verdict",
    "wager",
    "wagers",
]
