"""The four tools of the routing benchmark: a small travel desk.

Their implementations return made-up sample data (derived from the arguments, so repeat
calls agree); the benchmark measures routing and argument filling, not the tools.
"""

from __future__ import annotations

import hashlib
from typing import Annotated

from pydantic import Field

from durable_loop.core.registry import ToolRegistry

CONDITIONS = ["sunny", "cloudy", "light rain", "showers", "windy", "snow"]


def _number(*parts: object) -> int:
    return int(hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:8], 16)


def weather_forecast(
    city: Annotated[str, Field(min_length=2, description="City name, e.g. 'New York'")],
    days: Annotated[int, Field(ge=1, le=7, description="Days ahead, 1 = tomorrow")] = 1,
) -> dict[str, object]:
    """Weather forecast for a city (sample data)."""
    return {
        "city": city,
        "forecast": [
            {
                "day": day,
                "condition": CONDITIONS[_number(city, day) % len(CONDITIONS)],
                "high_c": 5 + _number(city, day, "t") % 25,
            }
            for day in range(1, days + 1)
        ],
    }


def flight_status(
    flight_number: Annotated[
        str, Field(pattern=r"^[A-Z0-9]{2}[0-9]{1,4}$", description="IATA flight number, e.g. BA117")
    ],
) -> dict[str, object]:
    """Status of a flight by its flight number (sample data)."""
    delay = _number(flight_number) % 50
    return {"flight": flight_number, "status": "on time" if delay < 30 else "delayed"}


def package_track(
    tracking_id: Annotated[
        str, Field(min_length=6, max_length=40, description="Carrier tracking number")
    ],
) -> dict[str, object]:
    """Where a parcel is, by its tracking number (sample data)."""
    stages = ["label created", "in transit", "out for delivery", "delivered"]
    return {"tracking_id": tracking_id, "stage": stages[_number(tracking_id) % len(stages)]}


def currency_convert(
    amount: Annotated[float, Field(gt=0, description="Amount of money to convert")],
    from_currency: Annotated[str, Field(pattern=r"^[A-Z]{3}$", description="ISO code, e.g. USD")],
    to_currency: Annotated[str, Field(pattern=r"^[A-Z]{3}$", description="ISO code, e.g. EUR")],
) -> dict[str, object]:
    """Convert an amount between currencies (sample rates)."""
    rate = 0.5 + (_number(from_currency, to_currency) % 150) / 100
    return {"amount": round(amount * rate, 2), "currency": to_currency, "rate": rate}


def travel_desk() -> ToolRegistry:
    registry = ToolRegistry()
    for fn in (weather_forecast, flight_status, package_track, currency_convert):
        registry.register(fn)
    return registry
