"""The explorer's event log: each event in words (territory, player and card names, the player's colour), in a
scrolling box around the current event."""

from __future__ import annotations

import html

import pandas as pd

from riskcore.explore.frames import GameFrames

BEFORE, AFTER = 12, 40  # events shown around the current one; the box scrolls


def _int(value) -> int | None:
    return None if pd.isna(value) else int(value)


def describe(f: GameFrames, row) -> str:
    """One event in words: `attacks Ukraine from Ural: 3 v 2 dice, loses 1, kills 1`."""
    t = f.board.territories
    src, dst, armies = _int(row.src), _int(row.dst), _int(row.armies)
    kind = row.kind
    if kind == "deal":
        return f"is dealt {t[dst]}"
    if kind in ("place", "reinforce"):
        return f"places {armies} on {t[dst]}"
    if kind == "attack":
        text = (f"attacks {t[dst]} from {t[src]}: {_int(row.attacker_dice)} v {_int(row.defender_dice)} dice, "
                f"loses {_int(row.attacker_losses)}, kills {_int(row.defender_losses)}")
        return text + (", conquers it" if not pd.isna(row.conquered) and bool(row.conquered) else "")
    if kind == "occupy":
        return f"moves {armies} into {t[dst]}"
    if kind == "retreat":
        return f"stops attacking {t[dst]} from {t[src]}"
    if kind == "fortify":
        return f"moves {armies} from {t[src]} to {t[dst]}"
    if kind in ("trade", "draw_card"):
        cards = [f.card_name(int(c)) for c in str(row.cards).split()] if isinstance(row.cards, str) else []
        verb = "trades" if kind == "trade" else "draws"
        return f"{verb} {', '.join(cards) or 'a card'}" + (f" for {armies}" if kind == "trade" and armies else "")
    if kind == "eliminate":
        return f"eliminates {f.player_name(_int(row.opponent))}"
    if kind == "win":
        return "wins the game"
    return kind.replace("_", " ")


def event_log(f: GameFrames, k: int) -> str:
    """HTML of the events around event k, the current one highlighted, in a box that scrolls."""
    lo, hi = max(0, k - BEFORE), min(f.n_events, k + AFTER + 1)
    rows = []
    for i in range(lo, hi):
        r = f.events.iloc[i]
        player = _int(r.player)
        who = f.player_name(player) if player is not None else ""
        swatch = (f'<span style="display:inline-block;width:9px;height:9px;background:{f.colour(player)};'
                  'border:1px solid #333;margin-right:4px"></span>') if player is not None else ""
        style = "background:#ffe08a;font-weight:bold" if i == k else ""
        rows.append(f'<tr style="{style};vertical-align:top"><td style="color:#777;padding:0 4px">{i}</td>'
                    f'<td style="color:#777;padding:0 4px;white-space:nowrap">t{int(r.turn)}</td>'
                    f'<td style="padding:0 4px;white-space:nowrap">{swatch}{html.escape(who)}</td>'
                    f'<td style="padding:0 4px">{html.escape(describe(f, r))}</td></tr>')
    return ('<div style="max-height:260px;overflow-y:auto;border:1px solid #ddd">'
            f'<table style="font-size:11px;line-height:1.3;border-collapse:collapse">{"".join(rows)}</table></div>')
