"""IoT devices: one owner's smart homes (a house, a lake cabin, an apartment) with rooms and ~100
devices — lights (dimmable, color, tunable white, on/off switches), smart plugs with energy meters,
thermostats, door locks with access codes, cameras, blinds, climate/motion/contact/smoke/leak
sensors, robot vacuums and water heaters — plus an alarm system per home, scenes, time-based
automations and a device history of sensor readings and events.

State behaviour (driven by the session clock, ``clock.on_time``): thermostats move the indoor
temperature towards their setpoint (2 °C/h) or drift to ambient; water heaters heat their tank;
batteries drain and a device whose battery reaches 0 % goes offline; a robot vacuum cleans for a
time proportional to the area, returns to its dock, fills its bin (auto-empty docks empty it) and
charges; away mode arms after a 2-minute exit delay; automations run at their times on their
weekdays; climate sensors and thermostats log hourly readings; metered plugs count kWh.

Failure rules (each refused with a message naming the argument, state unchanged):

- unknown home, room, device, scene or automation id;
- any command to an offline device (Wi-Fi lost, battery depleted);
- a command the device type does not support (power on a sensor or thermostat, brightness on an
  on/off switch, colors on a white-only light, color temperature on a non-tunable light, continuous
  recording on a battery camera, heat-pump mode on a plain tank, a setting for a sensor in a scene);
- values out of the model's range (thermostat setpoint, water-heater temperature, color temperature);
- a thermostat that is off or in eco mode cannot take a setpoint; a water heater in off or vacation
  mode cannot take a temperature;
- asking for the state a device is already in (already on, already locked, same position...);
- wrong lock code; locking a jammed lock or one whose door is open; unlocking a jammed lock;
- access codes: duplicate name or code, all slots used, unknown name, removing the owner code,
  adding without a code;
- alarm: arming away/night with a door or window open (home mode: a door), wrong or missing alarm
  code to disarm or change an armed mode, the mode it is already in;
- camera: recording while in privacy mode;
- robot vacuum: stuck, bin full, already cleaning or returning, battery too low for the area,
  rooms of another home or another floor, docking when docked/returning/stuck;
- scenes: duplicate name in the home, devices of another home, offline devices, too many devices,
  activating a scene none of whose devices can be set;
- automations: duplicate name in the home, both or neither of scene/device given, a device action
  the device type does not support (automations never unlock), a scene or device of another home,
  an update that changes nothing, empty weekdays.
"""

from servers.iot_devices import discovery, tools_automation, tools_climate, tools_devices, tools_security
from servers.iot_devices.clock import on_time
from servers.iot_devices.state import IotState
from servers.iot_devices.world import generate
from servers.kit import Domain

domain = Domain(
    "iot_devices", IotState, generate,
    description=(
        "A smart-home hub for one owner's homes: lights, plugs, thermostats, locks with access codes, "
        "cameras, blinds, sensors, robot vacuums and water heaters; an alarm system, scenes and time-based "
        "automations; device state that moves with time (temperatures, batteries, vacuum runs)."
    ),
    modules=(tools_devices, tools_climate, tools_security, tools_automation, discovery),
    on_time=on_time,
)

__all__ = ["domain"]
