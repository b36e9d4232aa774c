"""The explorer's event log: each event in words (territory, player and card names, the player's colour), the
current one highlighted between the events before it and those after it.

The current event sits between two scrolling boxes, never inside one, so it is always in view however long the
rows around it wrap; the box of earlier events opens scrolled to its end (the events just before)."""

from __future__ import annotations

import html

import pandas as pd

from riskcore.explore.frames import GameFrames

BEFORE, AFTER = 30, 40  # events shown around the current one; each side scrolls
# the three parts are tables of the same columns: fixed widths keep them aligned
COLUMNS = '<colgroup><col style="width:38px"><col style="width:34px"><col style="width:112px"><col></colgroup>'
TABLE = ('<table style="width:100%;table-layout:fixed;font-size:11px;line-height:1.3;border-collapse:collapse">'
         + COLUMNS)


def _int(value) -> int | None:
    return None if pd.isna(value) else int(value)


def describe_attack(f: GameFrames, row) -> str:
    """An attack event in words. A single roll (`stop_at` null): `attacks Ukraine from Ural: one roll, 3 v 2 dice,
    loses 1, kills 1`. A whole battle, rolled until the territory falls or the attacker is down to `stop_at`
    rolling armies: `attacks Ukraine from Ural: a whole battle, loses 2, kills 5 in all, conquers it`."""
    t = f.board.territories
    where = f"attacks {t[_int(row.dst)]} from {t[_int(row.src)]}"
    losses = f"loses {_int(row.attacker_losses)}, kills {_int(row.defender_losses)}"
    stop_at = _int(getattr(row, "stop_at", None))
    if stop_at is None:
        text = f"{where}: one roll, {_int(row.attacker_dice)} v {_int(row.defender_dice)} dice, {losses}"
    else:
        until = "to the end" if stop_at == 0 else f"until {stop_at} armies are left to roll"
        text = f"{where}: a whole battle {until}, {losses} in all"
    return text + (", conquers it" if not pd.isna(row.conquered) and bool(row.conquered) else "")


def describe(f: GameFrames, row) -> str:
    """One event in words: `places 3 on Ukraine`, `attacks Ukraine from Ural: one roll, ...`."""
    t = f.board.territories
    src, dst, armies = _int(row.src), _int(row.dst), _int(row.armies)
    kind = row.kind
    if kind == "deal":
        return f"is dealt {t[dst]}"
    if kind in ("place", "reinforce"):
        return f"places {armies} on {t[dst]}"
    if kind == "attack":
        return describe_attack(f, row)
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


def _rows(f: GameFrames, lo: int, hi: int, current: int) -> str:
    rows = []
    for i in range(lo, hi):
        r = f.events.iloc[i]
        player = _int(r.player)
        who = f.player_name(player) if player is not None else ""
        swatch = (f'<span style="display:inline-block;width:9px;height:9px;background:{f.colour(player)};'
                  'border:1px solid #333;margin-right:4px"></span>') if player is not None else ""
        style = "background:#ffe08a;font-weight:bold" if i == current else ""
        rows.append(f'<tr style="{style};vertical-align:top"><td style="color:#777;padding:0 4px">{i}</td>'
                    f'<td style="color:#777;padding:0 4px">t{int(r.turn)}</td>'
                    f'<td style="padding:0 4px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis" '
                    f'title="{html.escape(who)}">{swatch}{html.escape(who)}</td>'
                    f'<td style="padding:0 4px">{html.escape(describe(f, r))}</td></tr>')
    return "".join(rows)


def event_log(f: GameFrames, k: int) -> str:
    """HTML of the events around event k: the earlier ones in a box scrolled to its end, event k highlighted
    outside any scrolling box, the later ones in a box below."""
    before = _rows(f, max(0, k - BEFORE), k, k)
    after = _rows(f, k + 1, min(f.n_events, k + AFTER + 1), k)
    # column-reverse: a box that overflows shows its end, the events just before the current one
    earlier = ('<div class="riskcore-log-before" style="display:flex;flex-direction:column-reverse;max-height:75px;'
               f'overflow-y:auto">{TABLE}{before}</table></div>') if before else ""
    later = (f'<div class="riskcore-log-after" style="max-height:150px;overflow-y:auto">{TABLE}{after}</table></div>'
             if after else "")
    return (f'<div class="riskcore-log" style="border:1px solid #ddd">{earlier}'
            f'<div class="riskcore-log-current">{TABLE}{_rows(f, k, k + 1, k)}</table></div>{later}</div>')
